"""rewrite stage of foresight cc."""
