"""Models of communication time: α-β, NBL f(L), the LogP family; fits; reference machines."""
