"""The shared I/O-node cache of paper 3: its simulator's command (`foresight sim`)."""
