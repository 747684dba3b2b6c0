// PLACEHOLDER: the macro subsystem fills this in.
