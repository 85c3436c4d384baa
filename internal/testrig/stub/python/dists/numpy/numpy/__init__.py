# stub module
