"""The time of a schedule under a model of communication."""
