// waitlab::engine — the replay engine's two types as the analyses' headers name them (a shard of
// the trace, the transport between processes), declared only: a header that takes them by
// reference includes this, not shard.hpp and transport.hpp (the simulator includes the analyses'
// headers and must not depend on the engine's). analysis/output, below the engine, declares them
// itself (analysis/output/entry.hpp).
#pragma once

namespace waitlab::engine {
struct Shard;
class Transport;
}  // namespace waitlab::engine
