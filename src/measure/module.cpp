namespace ptxbench::measure {} // placeholder until the module lands
