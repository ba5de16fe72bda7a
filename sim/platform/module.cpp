// Placeholder until the module has code; keeps the library target non-empty.
namespace trainsim::platform {}
