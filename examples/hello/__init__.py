"""The hello operator: the smallest complete crdkit operator (see README, "Your first operator")."""
