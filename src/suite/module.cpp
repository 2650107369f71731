// placeholder until the module lands
namespace ptxbench::suite {}
