"""schedule stage of foresight cc."""
