"""analysis stage of foresight cc."""
