namespace ptxbench::reference {} // placeholder until the module lands
