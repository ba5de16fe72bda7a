#include "engine/step_engine.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "engine/contention.hpp"
#include "engine/flow_classes.hpp"
#include "model/compute.hpp"
#include "model/step_estimate.hpp"
#include "parallel/layout.hpp"
#include "parallel/schedule.hpp"
#include "platform/platform.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {

config::Fidelity resolve_fidelity(const config::Scenario& scenario, config::Fidelity requested) {
  if (requested != config::Fidelity::kAuto) return requested;
  if (scenario.fidelity != config::Fidelity::kAuto) return scenario.fidelity;
  // Full fidelity costs dp x pp stage actors plus as many communication actors; measured on 3.32
  // it stays fast up to a few hundred actors.
  return scenario.parallel.dp * scenario.parallel.pp <= 256 ? config::Fidelity::kFull : config::Fidelity::kSymmetric;
}

int64_t resolve_buckets(const model::StageCost& stage, const model::ParallelSpec& par, int64_t requested) {
  if (requested > 0) return requested;
  double params = 0;
  for (const auto& c : stage.chunks) params += c.param_count;
  // Megatron's default buckets (model::grad_bucket_params); more than 8 changes the exposed tail by
  // little and multiplies flows (DESIGN.md: 8 buckets 0.046 s/step, 32 buckets 0.19 s/step).
  return std::clamp<int64_t>(static_cast<int64_t>(std::ceil(params / model::grad_bucket_params(par))), 1, 8);
}

namespace {

// Above this many edges in one phase a symmetric run keeps an evenly spaced sample: each finished
// activity costs O(in-flight activities of its owner) in SimGrid 3.32 (DESIGN.md).
constexpr size_t kMaxEdgesPerPhase = 1024;

// A pass's name in the trace ("F3.1": micro-batch 3 of local chunk 1); empty when its step is not
// traced (most are; building the name cost 2% of a flagship tenant step).
std::string pass_name(char pass, const parallel::PipelineOp& op, bool trace) {
  if (!trace) return {};
  return pass + std::to_string(op.micro_batch) + "." + std::to_string(op.chunk);
}

// A p2p message: when the sender posted it (to split the receiver's wait into bubble and comm).
struct Message {
  double posted_s = 0;
  uint64_t flow = 0;  // trace flow id (0: not traced)
};

// A counting semaphore that calls on SimGrid only to block or to wake: an acquire that finds a
// count and a release that nobody waits for are bookkeeping in the calling actor (SimGrid runs one
// actor at a time), not simcalls (5,000 of the 22,000 simcalls of a flagship tenant step were).
// The same instants as sg4::Semaphore: an acquire that need not block returns at once there too,
// only after the other actors of the instant had their turn. A waiter registers before its
// blocking acquire; a release meant for it goes through the semaphore, in either order of the two
// simcalls.
class Signal {
 public:
  void release() {
    if (waiting_ > 0) {
      --waiting_;
      sem_->release();
    } else {
      ++count_;
    }
  }
  void acquire() {
    if (count_ > 0) {
      --count_;
      return;
    }
    ++waiting_;
    sem_->acquire();
  }
  // Releases not yet taken.
  int64_t available() const { return count_ + sem_->get_capacity(); }

 private:
  int64_t count_ = 0;
  int64_t waiting_ = 0;
  sg4::SemaphorePtr sem_ = sg4::Semaphore::create(0);
};
using SignalPtr = std::shared_ptr<Signal>;

// Where one pipeline transfer meets its receiver: one per (replica, model chunk, micro-batch) and
// direction, used once a step. The transfer is eager, as Megatron posts its receives ahead of the
// sends (batch_isend_irecv): its flow starts when the sender posts it, the sender waits for it to
// land, then signals the receiver, which takes it at once or waits for it. A host-to-host flow and
// a semaphore instead of a mailbox: the same flow on the same route from the same instant, without
// the receiver's wait on the flow (a timer of its own in SimGrid 3.32) or the mailbox's matching.
struct P2pSlot {
  std::string name;            // "act/r/g/mb", "grad/r/g/mb": named in the trace
  sg4::Host* to = nullptr;     // the receiving stage's GPU
  SignalPtr landed;            // released once the transfer has landed
  Message message;             // what the last transfer carried
};

// A pipeline transfer posted asynchronously (ParallelSpec::overlap_p2p_comm): the stage's p2p
// actor for that direction sends it while the stage computes; `done` once it has landed (the
// sender waits for that before its next pass in the same direction, as Megatron waits for its
// send handles).
struct P2pJob {
  P2pSlot* slot = nullptr;
  sg4::Host* from = nullptr;
  uint64_t bytes = 1;
  double latency_s = 0;
  Message message;
  SignalPtr done = std::make_shared<Signal>();
  bool exit = false;
};
using P2pJobPtr = std::shared_ptr<P2pJob>;

// One DP flow as the communication actor starts it.
struct DpFlow {
  sg4::Host* src = nullptr;
  sg4::Host* dst = nullptr;
  uint64_t bytes = 1;
};
// An edge alone on its links (FlowCensus::classify) and its route (FlowCensus::lone: what its rate
// depends on).
struct LoneFlow {
  DpFlow flow;
  int32_t route = -1;
};
// One phase of a collective: the flows started at once, one per class of the census, and, when
// link bandwidths change during the run, the same flows as those that stand for edges alone on
// their links and the others, for classes by the rates they start with (Simulation::reclass).
struct PlanPhase {
  std::vector<DpFlow> flows;
  std::vector<DpFlow> fixed;
  std::vector<LoneFlow> lone;
  int64_t edges = 0;
};
// A DP collective as one communication actor runs it: its phases, one after the other. Made once
// per (actor, kind, bytes): Simulation::flow_plan.
struct FlowPlan {
  std::vector<PlanPhase> phases;
};
using FlowPlanPtr = std::shared_ptr<const FlowPlan>;

// A DP collective (or ZeRO-3 gather) queued on a stage's communication actor.
struct CommJob {
  FlowPlanPtr plan;
  SignalPtr done = std::make_shared<Signal>();
  bool exit = false;
  std::string name;
  bool traced = false;
  int64_t rail = 0;  // the TP rank whose DP ring this is
  double latency_s = 0;  // NCCL ring latency of the calls this job stands for, waited before its flows
};
using CommJobPtr = std::shared_ptr<CommJob>;

// Per-step wait/compute accounting of one stage actor.
struct StepAccount {
  double compute_s = 0;
  double tp_comm_s = 0;
  double optimizer_s = 0;
  double comm_s = 0;
  double bubble_s = 0;
};

class Simulation;

// The communication actor of one (replica, stage, rail): runs queued collectives one after the
// other, like an NCCL stream. A rail is one TP rank's DP ring (one actor per rail keeps SimGrid's
// per-owner cost of a finished flow at O(ring size)).
class CommActor {
 public:
  CommActor(Simulation* sim, int64_t replica, int64_t stage, int64_t rail)
      : sim_(sim), replica_(replica), stage_(stage), rail_(rail) {}
  void operator()();

 private:
  Simulation* sim_;
  int64_t replica_;
  int64_t stage_;
  int64_t rail_;
};

// What a stage actor can do next, for Simulation::timed_transfer: `until` >= 0: it starts no flow
// and submits no collective before `until` (it is in a timed wait that ends there, the last part
// of which may be a timed transfer over `timed_route`); `after_receive_s` >= 0: it waits for a
// transfer to land and then computes at least that long before anything else; neither: it may
// start a flow at any instant.
struct Quiet {
  double until = -1;
  double after_receive_s = -1;
  int32_t timed_route = -1;
  bool then_submits = false;  // the timed wait is a gradient bucket's backward: a collective follows
};

// The p2p actor of one (replica, stage, direction): sends the stage's asynchronously posted
// pipeline transfers in that direction one after the other (one NCCL stream each way).
class P2pActor {
 public:
  P2pActor(Simulation* sim, int64_t queue) : sim_(sim), queue_(queue) {}
  void operator()();

 private:
  Simulation* sim_;
  int64_t queue_;
};

// Whether the pass after ops[i] goes the other way (forward after backward or back).
bool turns_after(const std::vector<parallel::PipelineOp>& ops, size_t i) {
  return i + 1 < ops.size() && ops[i + 1].pass != ops[i].pass;
}

// One pipeline stage of one replica.
class StageActor {
 public:
  StageActor(Simulation* sim, int64_t replica, int64_t stage) : sim_(sim), replica_(replica), stage_(stage) {}
  void operator()();

 private:
  // How a pass sends its output to the neighbouring chunk:
  //  - kBlocking: the stage waits for the transfer to land before it goes on;
  //  - kDeferred (forward only): Megatron's interleaved schedule without overlap_p2p_comm sends a
  //    steady-state forward's output together with the next backward's gradient, after that
  //    backward (send_forward_backward_recv_forward_backward): the send waits in deferred_;
  //  - kAsync (overlap_p2p_comm, a pass followed by one in the other direction): posted to the
  //    p2p actor and awaited before the next pass in the same direction. Where that pass comes
  //    next anyway, posting and awaiting at once is the blocking send, which costs SimGrid less.
  enum class Send { kBlocking, kDeferred, kAsync };
  void forward(const parallel::PipelineOp& op, StepAccount& acc, bool trace, Send send_mode);
  void backward(const parallel::PipelineOp& op, bool last_micro_batch, StepAccount& acc, bool trace, Send send_mode);
  // ZeRO-3 / FSDP: the step's passes layer by layer. Each layer's weights are all-gathered before it
  // runs (the next layer's gather issued when this one starts: prefetch depth 1), and after each
  // layer's backward its gradients are reduce-scattered, every micro-batch.
  void run_zero3_passes(const std::vector<parallel::PipelineOp>& ops, const model::StageCost& stage_cost,
                        StepAccount& acc, bool trace);
  // Runs `seconds` of the pass on the GPU; `tp_share` of it is exposed TP/CP communication.
  // A timed wait, not a SimGrid Exec: the stage actor is the only one that computes on its GPU's
  // host (one actor per simulated rank; the communication actors only send), so an Exec would end
  // at the same instant, while costing two activities (the Exec and the synchro its wait makes)
  // and a variable in the CPU model's sharing where a sleep is one timer (issue 20: 16% fewer
  // instructions per 16K step with tenants). `then_wait_s` (the next send's NCCL latency) is
  // waited in the same activity after the pass. Returns whether it did (false for no pass).
  bool compute(double seconds, double tp_share, StepAccount& acc, const char* category, const std::string& name,
               bool trace, double then_wait_s = 0);
  // With `trace`: the send and the receive as slices, the bubble before a receive, and a flow
  // event joining the two ends.
  // `then_computes_s` > 0: once it has landed the actor computes at least that long before it starts
  // a flow or submits a collective (Quiet).
  void receive(P2pSlot& slot, StepAccount& acc, bool trace, double then_computes_s = 0);
  // NCCL's per-message cost of a transfer to `to_stage` (model::p2p_call_cost, as the closed form).
  model::NetCallCost p2p_call(int64_t to_stage, double bytes) const;
  // `latency_waited`: the call's latency has just passed (compute's then_wait_s).
  void send(P2pSlot& slot, int64_t to_stage, double bytes, StepAccount& acc, bool trace, bool latency_waited = false);
  // A pass's transfer to the neighbouring chunk: blocking (send), or (`async`) posted to the
  // direction's p2p actor (0 forward, 1 backward) and left in flight.
  void pass_send(P2pSlot& slot, int64_t to_stage, double bytes, int direction, bool async, StepAccount& acc, bool trace);
  // With overlap_p2p_comm: waits until this stage's last transfer in `direction` has landed.
  void await_send(int direction, StepAccount& acc);
  // Runs the last `seconds` of a pass, then its transfer to `slot` (none: nullptr) in `direction`
  // as `mode` says; a forward deferred earlier leaves with it. Blocking, the transfer's NCCL latency
  // is waited in the same activity as the pass (compute's then_wait_s).
  void finish_pass(double seconds, double tp_share, StepAccount& acc, const char* category, const std::string& name,
                   bool trace, P2pSlot* slot, int64_t to_stage, double bytes, int direction, Send mode);
  // The deferred forward send and this backward's gradient (`grad`, or none from the first model
  // chunk) posted together and both waited for (one batch_isend_irecv), each after NCCL's latency.
  void send_with_deferred(P2pSlot* grad, int64_t grad_to_stage, double grad_bytes, StepAccount& acc, bool trace);
  // One collective of the stage's DP group: a job per simulated rail, all submitted.
  // `calls`: how many NCCL calls of the real stack the job stands for (their latency is paid).
  std::vector<CommJobPtr> collective(parallel::CollectiveKind kind, double bytes, double calls, const std::string& name,
                                     bool trace, bool pending);
  void submit(CommJobPtr job, bool pending);
  void wait(const CommJobPtr& job, StepAccount& acc);
  double slowdown();
  // A mixture-of-experts chunk's expert-parallel exchanges of one pass as flows to the ep group's
  // peers (model::EpLayerTraffic), beside the `window_s` of compute they hide under; returns when
  // both are done. Under full fidelity every member of the group waits for the others first.
  void exchange(const model::ChunkCost& cost, bool forward, double window_s, StepAccount& acc, const std::string& name,
                bool trace);
  // The pass time the stage actor runs as compute: the folded time without the exposed exchanges
  // and their window (the engine plays those), with this seed's routing skew on the expert GEMMs.
  double moe_compute_s(const model::ChunkCost& cost, bool forward, int64_t chunk, int64_t micro_batch) const;
  // Routing skew, per seed: for every (chunk, micro-batch, pass) of a step, the slowest of the ep
  // ranks' routed loads (each normal about the mean at EpLayerTraffic::routing_cv; the maximum of ep
  // draws), capped by the capacity factor, against the expected maximum the closed form counts.
  // Drawn once per run and group (every member sees the same slowest rank) and replayed every
  // step: the step-to-step variation this leaves out averages over the step's micro-batches.
  void draw_routing();

  Simulation* sim_;
  int64_t replica_;
  int64_t stage_;
  std::vector<CommJobPtr> pending_;
  P2pJobPtr in_flight_[2];  // overlap_p2p_comm: the last transfer posted each way
  struct DeferredSend {
    P2pSlot* slot = nullptr;
    int64_t to_stage = 0;
    double bytes = 0;
  } deferred_;
  std::mt19937_64 rng_;
  std::vector<double> routing_;  // per (chunk, micro-batch, pass): the slowest ep rank's expert time factor
  bool bucket_ = false;           // compute() runs a gradient bucket's backward
  Quiet* quiet_ = nullptr;  // its entry in Simulation::quiet_ (timed transfers on)
};

class Simulation {
 public:
  Simulation(const config::Scenario& sc, const model::StepCosts& costs, const EngineOptions& opt)
      : sc_(sc), costs_(costs), opt_(opt), layout_(sc.parallel, sc.cluster.gpus_per_node),
        closed_form_(model::estimate_step(costs, sc.model, sc.parallel, sc.training, sc.cluster)),
        dp_overlap_tax_s_(closed_form_.dp_overlap_tax_s) {}

  RunResult run(World world);

  // Shared state the actors read. Public within this file only (anonymous namespace).
  const config::Scenario& sc_;
  const model::StepCosts& costs_;
  const EngineOptions& opt_;
  parallel::RankLayout layout_;
  // Compute lost per step to the SMs NCCL holds while DP traffic runs beside it (the closed form's
  // figure, model/step_estimate.hpp): played at the step's end, counted as communication.
  model::StepEstimate closed_form_;  // the same step in closed form (model/step_estimate.hpp)
  double dp_overlap_tax_s_ = 0;
  std::unique_ptr<platform::Platform> platform_;
  std::vector<std::vector<parallel::PipelineOp>> plan_;
  int64_t p_ = 1, v_ = 1, m_ = 1, replicas_ = 1;
  bool full_ = false;
  int64_t buckets_per_chunk_ = 1;
  // act_[r][g][mb]: activation into model chunk g of replica r; grad_[r][g][mb]: gradient into g.
  std::vector<std::vector<std::vector<P2pSlot>>> act_, grad_;
  std::vector<std::deque<CommJobPtr>> queues_;        // per simulated (replica, stage, rail)
  std::vector<SignalPtr> queue_ready_;
  // ParallelSpec::overlap_p2p_comm in effect (interleaved, pp > 1): per simulated (replica, stage)
  // and direction, the p2p actor's queue.
  bool overlap_p2p_ = false;
  std::vector<std::deque<P2pJobPtr>> p2p_queues_;
  std::vector<SignalPtr> p2p_ready_;
  int64_t p2p_index(int64_t replica, int64_t stage, int direction) const { return actor_index(replica, stage) * 2 + direction; }
  void post_p2p(int64_t replica, int64_t stage, int direction, P2pJobPtr job) {
    const int64_t q = p2p_index(replica, stage, direction);
    if (timed_transfers_ && !job->exit) ++p2p_jobs_[static_cast<size_t>(actor_index(replica, stage))];
    p2p_queues_[q].push_back(std::move(job));
    p2p_ready_[q]->release();
  }
  std::vector<sg4::BarrierPtr> dp_barrier_;           // per (stage, rail), over replicas (full fidelity)
  int64_t rails_ = 1;                                 // TP ranks whose DP rings go on the network
  sg4::BarrierPtr step_barrier_;
  std::vector<double> straggle_;                      // per simulated (replica, stage) slowdown
  int64_t critical_stage_ = 0;
  std::vector<std::vector<StepAccount>> accounts_;    // [actor][step]
  std::vector<double> step_end_;                      // per step: barrier exit time
  RunResult result_;
  int64_t steps_done_ = 0;
  int64_t finished_stage_actors_ = 0;
  int64_t passes_done_ = 0;  // passes every stage actor has run so far (the watchdog's progress mark)
  int64_t dp_flows_step0_ = 0;
  int64_t p2p_flows_step0_ = 0;
  bool stop_requested_ = false;
  int64_t steady_step_ = -1;  // the step after which the rest is replicated (-1: none)

  // Nothing random can make two steps differ: no tenant traffic, no per-step jitter.
  bool can_replicate() const {
    return opt_.replicate && !(sc_.contention && sc_.contention->tenants > 0) &&
           !(sc_.stragglers && (sc_.stragglers->jitter > 0 || sc_.stragglers->episodes_per_gpu_hour > 0)) &&
           !(sc_.link_faults && sc_.link_faults->flaps_per_link_hour > 0);
  }
  // Transient stragglers (StragglerSpec::episodes_per_gpu_hour): a daemon draws episodes over all
  // GPUs (Poisson, seeded); each slows the simulated stage that GPU belongs to (the replica it is
  // in when every replica is simulated, else the one simulated replica, which stands for all)
  // for an exponential time, then restores it. Overlapping episodes on one stage count once.
  void start_straggler_episodes();
  // With daemons that run for ever (tenants, link flaps, straggler episodes) simulated time never
  // stops, so SimGrid cannot see stage actors blocked for good: a run would hang. The watchdog, a
  // daemon of its own in every run (so no list of which features start daemons can fall behind),
  // ends the simulation when no pass has run for an hour plus 100 closed-form steps of simulated
  // time (longer than any wait a live run has: tenants keep every link at 5% or more of its
  // bandwidth), and the run fails as stalled.
  void start_watchdog();
  std::vector<int64_t> episodes_active_;
  std::vector<double> straggle_base_;
  // Steps k-3, k-2 and k-1 (all finished and accounted when step k ends) took the same time and
  // split it the same way on every simulated GPU: the run is in its steady state.
  bool steady_before(int64_t k) const {
    if (k < 4) return false;
    auto dur = [&](int64_t i) { return step_end_[i] - step_end_[i - 1]; };
    const double d = dur(k - 1), tol = 1e-9 * d;
    if (std::fabs(dur(k - 2) - d) > tol || std::fabs(dur(k - 3) - d) > tol) return false;
    for (const auto& acc : accounts_)
      for (int64_t i : {k - 2, k - 3}) {
        const StepAccount &a = acc[k - 1], &b = acc[i];
        if (std::fabs(a.compute_s - b.compute_s) > tol || std::fabs(a.tp_comm_s - b.tp_comm_s) > tol ||
            std::fabs(a.optimizer_s - b.optimizer_s) > tol || std::fabs(a.comm_s - b.comm_s) > tol ||
            std::fabs(a.bubble_s - b.bubble_s) > tol)
          return false;
      }
    return true;
  }

  int64_t actor_index(int64_t replica, int64_t stage) const { return replica * p_ + stage; }
  int64_t comm_index(int64_t replica, int64_t stage, int64_t rail) const { return actor_index(replica, stage) * rails_ + rail; }
  int64_t replicas_total() const { return sc_.parallel.dp * sc_.parallel.cp; }
  // ZeRO >= 1 reduce-scatters gradients (the distributed optimizer), plain DP all-reduces them.
  parallel::CollectiveKind grad_kind() const {
    return sc_.parallel.zero >= 1 ? parallel::CollectiveKind::kReduceScatter : parallel::CollectiveKind::kAllReduce;
  }
  sg4::Host* host_of_rank(int64_t rank) const {
    return platform_->gpu(layout_.node(rank), layout_.local(rank));
  }
  sg4::Host* stage_host(int64_t replica, int64_t stage) const {
    return host_of_rank(layout_.rank(0, 0, replica, stage));
  }
  // Trace tracks: 0 "steps", then per simulated GPU its compute, TP and DP streams.
  enum Stream { kCompute = 0, kTp = 1, kDp = 2 };
  int64_t track_of(int64_t replica, int64_t stage, Stream stream) const {
    return 1 + (replica * p_ + stage) * 3 + stream;
  }
  uint64_t next_flow_ = 0;
  bool traced(int64_t replica, int64_t step) const { return step < opt_.trace_steps && replica < 8; }
  void trace(int64_t track, const std::string& name, const char* cat, double start, double end) {
    result_.trace.push_back({name, cat, track, start, end - start, 'X', 0});
  }
  // Gradient bytes of local chunk c on stage s (the stage's total split by parameter share).
  double chunk_share(int64_t stage, int64_t chunk) const {
    const auto& st = costs_.stages[stage];
    double total = 0;
    for (const auto& c : st.chunks) total += c.param_count;
    return total > 0 ? st.chunks[chunk].param_count / total : 1.0 / static_cast<double>(st.chunks.size());
  }
  // A DP collective's flows as edges between dp_group members, one phase per NCCL call (run one
  // after the other). Each edge's bytes are on the wire: inside a node times model::intra_wire_factor
  // (the bus bandwidth measured for that collective at `bytes`, as the closed form takes it),
  // across nodes times `net_factor` (NCCL's protocol overhead, dp_call).
  std::vector<parallel::Phase> dp_phases(int64_t stage, parallel::CollectiveKind kind, double bytes, int64_t rail = 0,
                                         double net_factor = 1) const;
  // The flows the communication actor of (replica, stage, rail) starts for a collective of `bytes`
  // per GPU: dp_phases, the edges its replica sends (full fidelity), as hosts and whole bytes.
  // Planned on first use and kept (a collective of a given size recurs every step).
  FlowPlanPtr flow_plan(int64_t replica, int64_t stage, int64_t rail, parallel::CollectiveKind kind, double bytes,
                        double net_factor);
  std::map<std::tuple<int64_t, int, double, double>, FlowPlanPtr> flow_plans_;  // by (comm actor, kind, bytes, net factor)
  // Flow classes (engine.flow_classes): every flow the run can start, counted before it starts;
  // null when classes are off.
  std::unique_ptr<FlowCensus> census_;
  void take_census();
  // When a link's bandwidth may next change (tenants, link faults); null without them.
  std::shared_ptr<const NoiseCalendar> noise_;
  double tcp_gamma_ = 0;  // SimGrid's TCP window bound: rate <= gamma / (2 x latency); 0 = none
  // The flows of `phase` to start now: one per class of the edges alone on their links that start
  // with the same latency, bytes and rate, when no link bandwidth changes before they would all
  // end at those rates (then those are their rates throughout), plus the edges not alone. False
  // (and `out` unspecified) when a change may come first.
  bool reclass(const PlanPhase& phase, std::vector<DpFlow>& out) const;
  // CM02's rate now of a flow alone on `r`: the smallest of the bandwidths of the links that can be
  // the smallest, and the TCP window bound.
  double lone_rate(const LoneRoute& r) const {
    double rate = std::numeric_limits<double>::infinity();
    for (sg4::Link* l : r.links) rate = std::min(rate, l->get_bandwidth());
    if (tcp_gamma_ > 0 && r.latency_s > 0) rate = std::min(rate, tcp_gamma_ / (2 * r.latency_s));
    return rate;
  }
  int64_t dp_flows_started_ = 0;
  int64_t dp_flows_classed_ = 0;
  // Timed pipeline transfers (issue 20). A blocking transfer alone on its links from start to end
  // (every other owner of a link it crosses that can be full is quiet until it ends, per
  // FlowCensus's owners) at bandwidths no daemon changes before it ends (NoiseCalendar) takes
  // latency + bytes / rate, CM02's time for a lone flow (flow_classes.hpp): the sender waits that
  // long instead of starting a SimGrid flow. What each stage actor can do next: Quiet.
  bool timed_transfers_ = false;    // on for runs whose actors keep quiet_ (take_census)
  std::vector<Quiet> quiet_;        // per simulated stage actor
  std::vector<int64_t> comm_jobs_;  // per communication actor: jobs submitted and not yet done
  std::vector<int64_t> p2p_jobs_;   // per simulated stage actor: posted transfers not yet landed
  int64_t p2p_timed_ = 0;
  // Whether the transfer of `bytes` stage actor `me` would start now from `from` to `to` is alone
  // throughout; then its end (SimGrid's clock) and route.
  bool timed_transfer(int64_t me, sg4::Host* from, sg4::Host* to, uint64_t bytes, double& end, int32_t& route) const;
  // Per simulated stage actor: inside its step's passes with more to come, any collective it submits
  // follows a gradient bucket's backward of at least bucket_s (StageActor::backward); elsewhere
  // (before the first pass, at the last, after) it may submit at any instant.
  std::vector<char> mid_passes_;
  std::vector<double> bucket_s_;
  // The first real bucket's share of a backward of `backward_s` (StageActor::backward's
  // real_backward): the least of it a collective can follow.
  double first_bucket_s(double backward_s) const {
    return backward_s / (std::max(1.0, calls_per_job_) * static_cast<double>(std::max<int64_t>(1, buckets_per_chunk_)));
  }
  double submit_bound(int64_t actor, double now) const {
    const Quiet& q = quiet_[static_cast<size_t>(actor)];
    const bool mid = mid_passes_[static_cast<size_t>(actor)] != 0;
    const double gap = mid ? bucket_s_[static_cast<size_t>(actor)] : 0;
    if (q.until >= 0) return q.then_submits ? q.until : q.until + gap;
    return now + gap;
  }
  double quiet_bound(int64_t actor, double now) const {
    const Quiet& q = quiet_[static_cast<size_t>(actor)];
    return q.until >= 0 ? q.until : q.after_receive_s >= 0 ? now + q.after_receive_s : now;
  }
  // Share of a chunk's pass time that is exposed TP/CP communication (same in both passes).
  static double tp_share(const model::ChunkCost& c) {
    const double total = c.forward_s + c.backward_s;
    return total > 0 ? std::clamp(c.tp_comm_s / total, 0.0, 1.0) : 0;
  }
  // NCCL's per-call cost of one DP collective of `bytes` per GPU (model/compute.hpp), and how many
  // real calls one simulated job stands for (the engine simulates at most 8 gradient buckets).
  model::NetCallCost dp_call(parallel::CollectiveKind kind, double bytes) const;
  // Gradient buckets of the real stack on a stage (model::grad_bucket_params each).
  double real_buckets(int64_t stage) const {
    double params = 0;
    for (const auto& c : costs_.stages[stage].chunks) params += c.param_count;
    return std::max(1.0, std::ceil(params / model::grad_bucket_params(sc_.parallel)));
  }
  double calls_per_job_ = 1;

  // Expert parallelism (model.moe with ep > 1): the all-to-alls go on the network as flows from each
  // simulated GPU to its ep group's peers: per other node of the group, the member of the same local
  // index (DeepEP and NCCL's PXN cross on the GPU's own rail); inside the node one flow to the next
  // member carrying what goes to all of them (their flows would share the sender's own NVSwitch port
  // or the node's PCIe link, and each member's port takes one such flow from its predecessor: the
  // same time, a seventh of the flows on a DGX).
  // Under symmetric fidelity only the simulated GPU sends; every GPU sends alike, so its own links
  // carry what they would, and the GPUs sharing its NIC (not simulated) are counted by sending its
  // inter-node bytes that many times over (nic_sharers_). ZeRO-3 keeps the folded times.
  struct EpPeer {
    sg4::Host* host = nullptr;
    bool other_node = false;
    double members = 1;  // in-node: the members whose bytes this flow carries
  };
  bool ep_flows_ = false;
  std::vector<std::vector<EpPeer>> ep_peers_;  // per simulated actor
  std::vector<sg4::BarrierPtr> ep_barrier_;    // per (stage, ep group) over its simulated members (full)
  double nic_sharers_ = 1;
  // The ep group a simulated GPU is in, numbered within its stage, and the group's global ranks:
  // ep ranks ParallelSpec::ep_stride apart in the stage's rank order (the expert layers' own
  // layout under folding, else carved out of the dp ranks).
  int64_t stage_ranks() const { return layout_.tp * layout_.cp * layout_.dp; }
  int64_t ep_group(int64_t replica, int64_t stage) const {
    const int64_t q = layout_.rank(0, 0, replica, stage) - stage * stage_ranks();
    return q / (sc_.parallel.ep * sc_.parallel.ep_stride());
  }
  int64_t ep_groups() const { return stage_ranks() / (sc_.parallel.ep * sc_.parallel.ep_stride()); }
  void plan_ep();
  // A platform file above the size where it loads with every pair checked: every pair of GPUs the
  // run's flows join (DP collectives, pipeline transfers, expert-parallel exchanges) must have a
  // route, checked before anything runs (util::InputError, exit 2).
  void check_used_routes() const;
  // Share of a chunk's compute time that is folded TP/CP communication, once the engine plays the
  // expert-parallel exchanges itself.
  double compute_tp_share(const model::ChunkCost& c) const {
    if (!ep_flows_ || c.ep.exchanges_forward == 0) return tp_share(c);
    const double ep = c.ep.exposed_forward_s + c.ep.exposed_backward_s;
    const double total = c.forward_s + c.backward_s - ep;
    return total > 0 ? std::clamp((c.tp_comm_s - ep) / total, 0.0, 1.0) : 0;
  }
};

void Simulation::check_used_routes() const {
  std::set<std::pair<const sg4::Host*, const sg4::Host*>> seen;
  auto need = [&](const sg4::Host* a, const sg4::Host* b) {
    if (a != b && seen.insert({a, b}).second) platform_->require_route(a, b);
  };
  const bool multi = replicas_total() > 1;
  for (int64_t st = 0; st < p_; ++st) {
    for (int64_t rail = 0; multi && rail < rails_; ++rail) {
      const auto group = layout_.dp_group(st, rail);
      for (auto kind : {parallel::CollectiveKind::kAllReduce, parallel::CollectiveKind::kReduceScatter,
                        parallel::CollectiveKind::kAllGather})
        for (const auto& phase : dp_phases(st, kind, 1.0, rail))
          for (const auto& e : phase) need(host_of_rank(group[e.src]), host_of_rank(group[e.dst]));
    }
    for (int64_t r = 0; r < replicas_; ++r) {
      if (p_ > 1) {
        need(stage_host(r, st), stage_host(r, (st + 1) % p_));
        need(stage_host(r, (st + 1) % p_), stage_host(r, st));
      }
      if (ep_flows_)
        for (const auto& peer : ep_peers_[static_cast<size_t>(actor_index(r, st))]) need(stage_host(r, st), peer.host);
    }
  }
}

void Simulation::take_census() {
  if (!sc_.flow_classes) return;
  census_ = std::make_unique<FlowCensus>(contended_links(sc_, *platform_, opt_.seed));
  FlowCensus& c = *census_;
  // Every DP edge each communication actor may send, whatever the collective (sizes do not change
  // routes): the ones it is asked to run are among them.
  if (replicas_total() > 1)
    for (int64_t r = 0; r < replicas_; ++r)
      for (int64_t st = 0; st < p_; ++st)
        for (int64_t rail = 0; rail < rails_; ++rail) {
          const auto group = layout_.dp_group(st, rail);
          for (auto kind : {parallel::CollectiveKind::kAllReduce, parallel::CollectiveKind::kReduceScatter,
                            parallel::CollectiveKind::kAllGather})
            for (const auto& phase : dp_phases(st, kind, 1.0, rail))
              for (const auto& e : phase) {
                const int64_t src_rank = group[e.src];
                if (full_ && (src_rank / layout_.tp / layout_.cp) % layout_.dp != r) continue;
                c.add(comm_index(r, st, rail), c.route(host_of_rank(src_rank), host_of_rank(group[e.dst])));
              }
        }
  // The stage actors' flows: pipeline transfers to the neighbouring stages (interleaved chunks wrap
  // from the last stage to the first), expert-parallel exchanges to the peers. A GPU's copy to
  // itself crosses no link a DP edge can use.
  for (int64_t r = 0; r < replicas_; ++r)
    for (int64_t st = 0; st < p_; ++st) {
      const int64_t owner = FlowCensus::stage_actor(actor_index(r, st));
      sg4::Host* me = stage_host(r, st);
      std::vector<sg4::Host*> to{stage_host(r, (st + 1) % p_), stage_host(r, (st + p_ - 1) % p_)};
      if (ep_flows_)
        for (const auto& peer : ep_peers_[static_cast<size_t>(actor_index(r, st))]) to.push_back(peer.host);
      for (sg4::Host* h : to)
        if (h != me) c.add(owner, c.route(me, h));
    }
  c.seal();
}

void Simulation::plan_ep() {
  const auto& par = sc_.parallel;
  // (Without folding, an ep group that takes context-parallel ranks too, ep not dividing dp, keeps
  // the folded times.)
  ep_flows_ = par.ep > 1 && (par.expert_tp > 0 || par.dp % par.ep == 0) && !(par.zero == 3 && replicas_total() > 1);
  if (!ep_flows_) return;
  const int64_t stride = par.ep_stride();
  ep_peers_.assign(static_cast<size_t>(replicas_ * p_), {});
  std::vector<unsigned> simulated_members(static_cast<size_t>(p_ * ep_groups()), 0);
  for (int64_t r = 0; r < replicas_; ++r)
    for (int64_t st = 0; st < p_; ++st) {
      const int64_t me = layout_.rank(0, 0, r, st);
      const int64_t q = me - st * stage_ranks();
      ++simulated_members[static_cast<size_t>(st * ep_groups() + ep_group(r, st))];
      std::set<int64_t> nodes_done{layout_.node(me)};
      std::vector<int64_t> members;
      const int64_t first = st * stage_ranks() + q / (par.ep * stride) * (par.ep * stride) + q % stride;
      for (int64_t j = 0; j < par.ep; ++j) members.push_back(first + j * stride);
      auto& peers = ep_peers_[static_cast<size_t>(actor_index(r, st))];
      std::vector<int64_t> in_node;  // from the member after me round to the one before
      for (int64_t m : members)
        if (layout_.node(m) == layout_.node(me)) in_node.push_back(m);
      const auto mine = std::find(in_node.begin(), in_node.end(), me) - in_node.begin();
      if (in_node.size() > 1)
        peers.push_back({host_of_rank(in_node[static_cast<size_t>(mine + 1) % in_node.size()]), false,
                         static_cast<double>(in_node.size() - 1)});
      // Per other node: the member on my rail, else its first member there.
      for (int64_t m : members) {
        if (nodes_done.count(layout_.node(m))) continue;
        int64_t pick = m;
        for (int64_t o : members)
          if (layout_.node(o) == layout_.node(m) && layout_.local(o) == layout_.local(me)) pick = o;
        nodes_done.insert(layout_.node(m));
        peers.push_back({host_of_rank(pick), true, 1});
      }
    }
  // Under full fidelity the group's simulated members (its TP-rank-0, CP-rank-0 GPUs) meet first.
  if (full_)
    for (unsigned n : simulated_members) ep_barrier_.push_back(n > 0 ? sg4::Barrier::create(n) : nullptr);
  // GPUs behind one NIC, of which the simulated ones send their own flows: under full fidelity the
  // simulated GPUs of a node sit tp x cp apart.
  const auto& cl = sc_.cluster;
  const int64_t per_nic = std::max<int64_t>(1, cl.gpus_per_node / std::max<int64_t>(1, cl.nics_per_node));
  const int64_t simulated = full_ ? std::max<int64_t>(1, per_nic / (layout_.tp * layout_.cp)) : 1;
  nic_sharers_ = static_cast<double>(per_nic) / static_cast<double>(simulated);
}


std::vector<parallel::Phase> Simulation::dp_phases(int64_t stage, parallel::CollectiveKind kind, double bytes,
                                                  int64_t rail, double net_factor) const {
  const auto group = layout_.dp_group(stage, rail);
  const model::ParallelSpec& par = sc_.parallel;
  // Collectives run one after the other, each as parts that run at once (parallel::plan_collective);
  // edges as indices into `group`.
  std::vector<std::vector<parallel::Phase>> calls;
  auto add = [&](parallel::CollectiveKind k, const std::vector<int64_t>& members, double b, std::vector<parallel::Phase>& parts) {
    std::vector<int64_t> ranks(members.size());
    for (size_t i = 0; i < members.size(); ++i) ranks[i] = group[static_cast<size_t>(members[i])];
    auto planned = parallel::plan_collective(k, ranks, layout_, b);
    // Inside a node the edges carry what the closed form's measured bus bandwidth implies
    // (model::intra_collective_time_s): a hierarchical all-reduce's intra-node part is its
    // reduce-scatter and all-gather on the same edges.
    int64_t q = 0;
    for (int64_t r : ranks) q += layout_.node(r) == layout_.node(ranks.front()) ? 1 : 0;
    const int64_t stride = std::max<int64_t>(1, sc_.cluster.gpus_per_node / std::max<int64_t>(q, 1));
    auto factor = [&](collectives::Kind ck) { return model::intra_wire_factor(sc_.cluster, ck, q, b, stride); };
    const bool hierarchical = planned.size() > 1;
    const double intra = k == parallel::CollectiveKind::kAllReduce
                             ? (hierarchical ? (factor(collectives::Kind::kReduceScatter) + factor(collectives::Kind::kAllGather)) / 2
                                             : factor(collectives::Kind::kAllReduce))
                         : k == parallel::CollectiveKind::kReduceScatter ? factor(collectives::Kind::kReduceScatter)
                                                                         : factor(collectives::Kind::kAllGather);
    for (auto& ph : planned)
      for (auto& e : ph) {
        const bool inside = layout_.node(ranks[static_cast<size_t>(e.src)]) == layout_.node(ranks[static_cast<size_t>(e.dst)]);
        e = {members[static_cast<size_t>(e.src)], members[static_cast<size_t>(e.dst)], e.bytes * (inside ? intra : net_factor)};
      }
    parts.insert(parts.end(), planned.begin(), planned.end());
  };
  const auto n = static_cast<int64_t>(group.size());
  if (par.hybrid_shard() && kind != parallel::CollectiveKind::kAllReduce) {
    // Hybrid sharding: within each shard group (consecutive members), then a reduce-scatter's
    // shares all-reduced across the groups (model::replica_collective).
    const int64_t s = par.shard_degree;
    std::vector<parallel::Phase>& within = calls.emplace_back();
    for (int64_t first = 0; first < n; first += s) {
      std::vector<int64_t> members;
      for (int64_t i = first; i < first + s; ++i) members.push_back(i);
      add(kind, members, bytes, within);
    }
    if (kind == parallel::CollectiveKind::kReduceScatter) {
      std::vector<parallel::Phase>& across = calls.emplace_back();
      for (int64_t j = 0; j < s; ++j) {
        std::vector<int64_t> members;
        for (int64_t i = j; i < n; i += s) members.push_back(i);
        add(parallel::CollectiveKind::kAllReduce, members, bytes / static_cast<double>(s), across);
      }
    }
  } else {
    std::vector<int64_t> all(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
    add(kind, all, bytes, calls.emplace_back());
  }
  std::vector<parallel::Phase> phases;
  for (auto& parts : calls) {
    size_t edges = 0;
    for (const auto& ph : parts) edges += ph.size();
    if (!full_ && edges > kMaxEdgesPerPhase) {
      // Each part sampled on its own at one stride: every kind of link keeps its share of each part.
      const size_t stride = (edges + kMaxEdgesPerPhase - 1) / kMaxEdgesPerPhase;
      for (auto& ph : parts) {
        parallel::Phase kept;
        for (size_t i = 0; i < ph.size(); i += stride) kept.push_back(ph[i]);
        ph = std::move(kept);
      }
    }
    // The parts run at once (parallel::plan_collective): one phase of flows.
    parallel::Phase merged;
    for (const auto& ph : parts) merged.insert(merged.end(), ph.begin(), ph.end());
    if (!merged.empty()) phases.push_back(std::move(merged));
  }
  return phases;
}

FlowPlanPtr Simulation::flow_plan(int64_t replica, int64_t stage, int64_t rail, parallel::CollectiveKind kind,
                                  double bytes, double net_factor) {
  const std::tuple<int64_t, int, double, double> key{comm_index(replica, stage, rail), static_cast<int>(kind), bytes, net_factor};
  if (const auto it = flow_plans_.find(key); it != flow_plans_.end()) return it->second;
  auto plan = std::make_shared<FlowPlan>();
  const auto group = layout_.dp_group(stage, rail);
  const int64_t owner = comm_index(replica, stage, rail);
  std::vector<DpFlow> mine;
  std::vector<int32_t> routes;
  std::set<std::pair<int32_t, uint64_t>> represented;  // (class, bytes) with a flow in this phase
  for (const auto& phase : dp_phases(stage, kind, bytes, rail, net_factor)) {
    mine.clear();
    routes.clear();
    for (const auto& e : phase) {
      const int64_t src_rank = group[e.src];
      // Full fidelity: each replica sends the edges leaving its own ranks.
      if (full_ && (src_rank / layout_.tp / layout_.cp) % layout_.dp != replica) continue;
      mine.push_back({host_of_rank(src_rank), host_of_rank(group[e.dst]),
                      static_cast<uint64_t>(std::max(1.0, std::round(e.bytes)))});
      if (census_) routes.push_back(census_->route(mine.back().src, mine.back().dst));
    }
    // One flow per class and size: the first member of each stands for the others.
    const std::vector<int32_t> cls = census_ ? census_->classify(owner, routes) : std::vector<int32_t>(mine.size(), -1);
    represented.clear();
    PlanPhase& ph = plan->phases.emplace_back();
    ph.edges = static_cast<int64_t>(mine.size());
    for (size_t i = 0; i < mine.size(); ++i) {
      if (cls[i] >= 0 && !represented.emplace(cls[i], mine[i].bytes).second) continue;
      ph.flows.push_back(mine[i]);
      // For reclass: the edges not alone, and one edge per class (its members start at the same
      // rate: they are alike at every instant).
      if (noise_ != nullptr) {
        if (cls[i] >= 0) ph.lone.push_back({mine[i], routes[i]});
        else ph.fixed.push_back(mine[i]);
      }
    }
  }
  flow_plans_.emplace(key, plan);
  return plan;
}

model::NetCallCost Simulation::dp_call(parallel::CollectiveKind kind, double bytes) const {
  using collectives::Kind;
  const Kind k = kind == parallel::CollectiveKind::kAllReduce       ? Kind::kAllReduce
                 : kind == parallel::CollectiveKind::kReduceScatter ? Kind::kReduceScatter
                                                                    : Kind::kAllGather;
  const int64_t n = replicas_total();
  const int64_t per_node = std::clamp<int64_t>(sc_.cluster.gpus_per_node / sc_.parallel.tp, 1, n);
  model::NetCallCost cost = model::net_call_cost(sc_.cluster, k, n, per_node, bytes);
  cost.latency_s = model::dp_call_latency_s(k, bytes, sc_.parallel, sc_.cluster);
  return cost;
}

bool Simulation::reclass(const PlanPhase& phase, std::vector<DpFlow>& out) const {
  const double now = sg4::Engine::get_clock();
  const double next = noise_->next_change();
  out = phase.fixed;
  std::vector<std::tuple<double, double, uint64_t>> classes;  // (latency, rate, bytes) of each started
  double last = now;
  for (const LoneFlow& e : phase.lone) {
    const LoneRoute& r = census_->lone(e.route);
    const double rate = lone_rate(r);
    last = std::max(last, now + r.latency_s + static_cast<double>(e.flow.bytes) / rate);
    const std::tuple<double, double, uint64_t> key{r.latency_s, rate, e.flow.bytes};
    if (std::find(classes.begin(), classes.end(), key) != classes.end()) continue;
    classes.push_back(key);
    out.push_back(e.flow);
  }
  // Far above the rounding of either date (SimGrid's and this one), far below any burst or flap.
  return last * (1 + 1e-9) + 1e-9 < next;
}

bool Simulation::timed_transfer(int64_t me, sg4::Host* from, sg4::Host* to, uint64_t bytes, double& end,
                                int32_t& route) const {
  if (!timed_transfers_) return false;
  route = census_->find_route(from, to);
  if (route < 0 || !census_->classable(route)) return false;
  const LoneRoute& r = census_->lone(route);
  const double rate = lone_rate(r);
  if (!(rate > 0) || std::isinf(rate)) return false;
  const double now = sg4::Engine::get_clock();
  end = now + r.latency_s + static_cast<double>(bytes) / rate;
  // Far above the rounding of either date (SimGrid's and this one), far below any pass.
  const double guard = end * (1 + 1e-9) + 1e-9;
  if (noise_ && !(guard < noise_->next_change())) return false;
  if (p2p_jobs_[static_cast<size_t>(me)] > 0) return false;  // its own posted transfers share its links
  for (int32_t id : census_->route_links(route)) {
    if (census_->never_full(id)) continue;
    const auto& owners = census_->owners(id);
    if (owners.size() > 64) return false;  // not worth the look
    for (int64_t o : owners) {
      if (o >= 0) {
        // A communication actor: busy, or its stage actor may submit it a collective in time.
        if (comm_jobs_[static_cast<size_t>(o)] > 0) return false;
        const int64_t j = o / rails_;
        if (j != me && submit_bound(j, now) < guard) return false;
        continue;
      }
      const int64_t j = -1 - o;
      if (j == me) continue;
      if (p2p_jobs_[static_cast<size_t>(j)] > 0) return false;
      const Quiet& q = quiet_[static_cast<size_t>(j)];
      if (q.timed_route >= 0) {
        const auto& theirs = census_->route_links(q.timed_route);
        if (std::find(theirs.begin(), theirs.end(), id) != theirs.end()) return false;
      }
      if (quiet_bound(j, now) < guard) return false;
    }
  }
  return true;
}

void CommActor::operator()() {
  Simulation& s = *sim_;
  const int64_t me = s.comm_index(replica_, stage_, rail_);
  sg4::Barrier* barrier = s.full_ ? s.dp_barrier_[stage_ * s.rails_ + rail_].get() : nullptr;
  for (;;) {
    s.queue_ready_[me]->acquire();
    CommJobPtr job = s.queues_[me].front();
    s.queues_[me].pop_front();
    if (job->exit) return;
    const double start = sg4::Engine::get_clock();
    const auto& phases = job->plan->phases;
    if (job->latency_s > 0 && !phases.empty()) sg4::this_actor::sleep_for(job->latency_s);
    std::vector<sg4::CommPtr> comms;
    std::vector<DpFlow> reclassed;
    for (const auto& phase : phases) {
      if (barrier != nullptr) barrier->wait();  // a collective starts when every member is there
      const std::vector<DpFlow>& flows = !phase.lone.empty() && s.reclass(phase, reclassed) ? reclassed : phase.flows;
      s.dp_flows_started_ += static_cast<int64_t>(flows.size());
      s.dp_flows_classed_ += phase.edges - static_cast<int64_t>(flows.size());
      comms.reserve(flows.size());
      for (const auto& f : flows) comms.push_back(sg4::Comm::sendto_async(f.src, f.dst, f.bytes));
      sg4::Comm::wait_all(comms);
      comms.clear();
    }
    if (barrier != nullptr && !phases.empty()) barrier->wait();  // and ends when all are done
    if (job->traced) s.trace(s.track_of(replica_, stage_, Simulation::kDp), job->name, "dp-sync", start, sg4::Engine::get_clock());
    if (s.timed_transfers_) --s.comm_jobs_[static_cast<size_t>(me)];
    job->done->release();
  }
}

void P2pActor::operator()() {
  Simulation& s = *sim_;
  for (;;) {
    s.p2p_ready_[queue_]->acquire();
    P2pJobPtr job = s.p2p_queues_[queue_].front();
    s.p2p_queues_[queue_].pop_front();
    if (job->exit) return;
    // NCCL's per-message latency, then the bytes on the wire (model::p2p_call_cost), as send().
    if (job->latency_s > 0) sg4::this_actor::sleep_for(job->latency_s);
    sg4::Comm::sendto(job->from, job->slot->to, job->bytes);
    job->slot->message = job->message;
    job->slot->landed->release();
    if (s.timed_transfers_) --s.p2p_jobs_[static_cast<size_t>(queue_ / 2)];
    job->done->release();
  }
}

double StageActor::slowdown() {
  const Simulation& s = *sim_;
  double f = s.straggle_[s.actor_index(replica_, stage_)];
  if (s.sc_.stragglers && s.sc_.stragglers->jitter > 0) {
    std::normal_distribution<double> noise(1.0, s.sc_.stragglers->jitter);
    f *= std::max(0.5, noise(rng_));
  }
  return f;
}

bool StageActor::compute(double seconds, double tp_share, StepAccount& acc, const char* category, const std::string& name,
                         bool trace, double then_wait_s) {
  if (seconds <= 0) return false;
  const double start = sg4::Engine::get_clock();
  if (quiet_ != nullptr) *quiet_ = {start + seconds + then_wait_s, -1, -1, bucket_};
  sg4::this_actor::sleep_for(seconds + then_wait_s);
  if (quiet_ != nullptr) *quiet_ = {};
  ++sim_->passes_done_;
  const double end = sg4::Engine::get_clock() - then_wait_s;
  acc.tp_comm_s += (end - start) * tp_share;
  acc.compute_s += (end - start) * (1 - tp_share);
  if (trace) {
    sim_->trace(sim_->track_of(replica_, stage_, Simulation::kCompute), name, category, start, end);
    // The exposed TP/CP share of the pass, drawn at its end on the GPU's TP stream.
    if (tp_share > 0)
      sim_->trace(sim_->track_of(replica_, stage_, Simulation::kTp), "TP " + name, "tp", end - (end - start) * tp_share, end);
  }
  return true;
}

void StageActor::receive(P2pSlot& slot, StepAccount& acc, bool trace, double then_computes_s) {
  const double t0 = sg4::Engine::get_clock();
  if (quiet_ != nullptr && then_computes_s > 0) *quiet_ = {-1, then_computes_s, -1};
  slot.landed->acquire();
  if (quiet_ != nullptr) *quiet_ = {};
  const double t1 = sg4::Engine::get_clock();
  const Message* msg = &slot.message;
  const double posted = std::clamp(msg->posted_s, t0, t1);
  acc.bubble_s += posted - t0;  // the sender had not finished its own work yet
  acc.comm_s += t1 - posted;    // the transfer itself
  if (trace && msg->flow != 0) {
    Simulation& s = *sim_;
    const int64_t track = s.track_of(replica_, stage_, Simulation::kCompute);
    if (posted > t0) s.trace(track, "bubble", "bubble", t0, posted);
    s.trace(track, "recv " + slot.name, "recv", posted, t1);
    s.result_.trace.push_back({"p2p", "p2p", track, posted, 0, 'f', msg->flow});
  }
}

model::NetCallCost StageActor::p2p_call(int64_t to_stage, double bytes) const {
  const Simulation& s = *sim_;
  const bool inter = s.layout_.node(s.layout_.rank(0, 0, replica_, stage_)) != s.layout_.node(s.layout_.rank(0, 0, replica_, to_stage));
  return model::p2p_call_cost(s.sc_.cluster, inter, bytes);
}

void StageActor::send(P2pSlot& slot, int64_t to_stage, double bytes, StepAccount& acc, bool trace, bool latency_waited) {
  // Megatron posts its sends and receives together and waits for them before the next pass
  // (batch_isend_irecv, then wait): the sender waits for its transfer to land. NCCL's per-message
  // latency first, then the bytes on the wire (model::p2p_call_cost, as the closed form counts).
  Simulation& s = *sim_;
  const model::NetCallCost call = p2p_call(to_stage, bytes);
  const double t0 = sg4::Engine::get_clock() - (latency_waited ? call.latency_s : 0);
  if (!latency_waited && call.latency_s > 0) sg4::this_actor::sleep_for(call.latency_s);
  const uint64_t flow = trace ? ++s.next_flow_ : 0;
  slot.message = Message{t0, flow};  // read by the receiver once landed is released, before the next step's send
  const auto wire = static_cast<uint64_t>(std::max(1.0, std::round(bytes * call.wire_factor)));
  double end = 0;
  int32_t route = -1;
  if (s.timed_transfer(s.actor_index(replica_, stage_), sg4::this_actor::get_host(), slot.to, wire, end, route)) {
    *quiet_ = {end, -1, route};
    sg4::this_actor::sleep_for(end - sg4::Engine::get_clock());
    *quiet_ = {};
    ++s.p2p_timed_;
  } else {
    sg4::Comm::sendto(sg4::this_actor::get_host(), slot.to, wire);
  }
  slot.landed->release();
  acc.comm_s += sg4::Engine::get_clock() - t0;
  if (trace) {
    const int64_t track = s.track_of(replica_, stage_, Simulation::kCompute);
    s.trace(track, "send " + slot.name + " to stage " + std::to_string(to_stage), "send", t0, sg4::Engine::get_clock());
    s.result_.trace.push_back({"p2p", "p2p", track, t0, 0, 's', flow});
  }
}

void StageActor::pass_send(P2pSlot& slot, int64_t to_stage, double bytes, int direction, bool async, StepAccount& acc, bool trace) {
  Simulation& s = *sim_;
  if (!async) {
    send(slot, to_stage, bytes, acc, trace);
    return;
  }
  const model::NetCallCost call = p2p_call(to_stage, bytes);
  auto job = std::make_shared<P2pJob>();
  job->slot = &slot;
  job->from = sg4::this_actor::get_host();
  job->bytes = static_cast<uint64_t>(std::max(1.0, std::round(bytes * call.wire_factor)));
  job->latency_s = call.latency_s;
  job->message = Message{sg4::Engine::get_clock(), trace ? ++s.next_flow_ : 0};
  if (trace) s.result_.trace.push_back({"p2p", "p2p", s.track_of(replica_, stage_, Simulation::kCompute), job->message.posted_s, 0, 's', job->message.flow});
  in_flight_[direction] = job;
  s.post_p2p(replica_, stage_, direction, std::move(job));
}

void StageActor::send_with_deferred(P2pSlot* grad, int64_t grad_to_stage, double grad_bytes, StepAccount& acc, bool trace) {
  Simulation& s = *sim_;
  const DeferredSend fwd = deferred_;
  deferred_ = {};
  struct Part {
    P2pSlot* slot;
    double bytes;
    model::NetCallCost call;
  };
  std::vector<Part> parts = {{fwd.slot, fwd.bytes, p2p_call(fwd.to_stage, fwd.bytes)}};
  if (grad != nullptr) parts.push_back({grad, grad_bytes, p2p_call(grad_to_stage, grad_bytes)});
  const double t0 = sg4::Engine::get_clock();
  double latency = 0;
  for (const Part& part : parts) latency = std::max(latency, part.call.latency_s);
  if (latency > 0) sg4::this_actor::sleep_for(latency);
  std::vector<sg4::CommPtr> comms;
  for (const Part& part : parts) {
    const uint64_t flow = trace ? ++s.next_flow_ : 0;
    part.slot->message = Message{t0, flow};
    if (trace) s.result_.trace.push_back({"p2p", "p2p", s.track_of(replica_, stage_, Simulation::kCompute), t0, 0, 's', flow});
    comms.push_back(sg4::Comm::sendto_async(sg4::this_actor::get_host(), part.slot->to,
                                            static_cast<uint64_t>(std::max(1.0, std::round(part.bytes * part.call.wire_factor)))));
  }
  sg4::Comm::wait_all(comms);
  for (const Part& part : parts) part.slot->landed->release();
  acc.comm_s += sg4::Engine::get_clock() - t0;
  if (trace) s.trace(s.track_of(replica_, stage_, Simulation::kCompute), "send (batched)", "send", t0, sg4::Engine::get_clock());
}

void StageActor::await_send(int direction, StepAccount& acc) {
  P2pJobPtr job = std::move(in_flight_[direction]);
  in_flight_[direction] = nullptr;
  if (!job) return;
  const double t0 = sg4::Engine::get_clock();
  job->done->acquire();
  acc.comm_s += sg4::Engine::get_clock() - t0;
}

void StageActor::submit(CommJobPtr job, bool pending) {
  Simulation& s = *sim_;
  const int64_t q = s.comm_index(replica_, stage_, job->rail);
  if (pending) pending_.push_back(job);
  if (s.timed_transfers_ && !job->exit) ++s.comm_jobs_[static_cast<size_t>(q)];
  s.queues_[q].push_back(std::move(job));
  s.queue_ready_[q]->release();
}

std::vector<CommJobPtr> StageActor::collective(parallel::CollectiveKind kind, double bytes, double calls,
                                               const std::string& name, bool trace, bool pending) {
  Simulation& s = *sim_;
  const model::NetCallCost call = s.dp_call(kind, bytes / std::max(calls, 1.0));
  std::vector<CommJobPtr> jobs;
  for (int64_t rail = 0; rail < s.rails_; ++rail) {
    auto job = std::make_shared<CommJob>();
    job->plan = s.flow_plan(replica_, stage_, rail, kind, bytes, call.wire_factor);
    job->name = name;
    job->traced = trace && rail == 0;
    job->rail = rail;
    job->latency_s = call.latency_s * std::max(calls, 1.0);
    jobs.push_back(job);
    submit(job, pending);
  }
  return jobs;
}

void StageActor::wait(const CommJobPtr& job, StepAccount& acc) {
  const double t0 = sg4::Engine::get_clock();
  job->done->acquire();
  acc.comm_s += sg4::Engine::get_clock() - t0;
}

void StageActor::exchange(const model::ChunkCost& cost, bool forward, double window_s, StepAccount& acc,
                          const std::string& name, bool trace) {
  Simulation& s = *sim_;
  const model::EpLayerTraffic& ep = cost.ep;
  const double n = static_cast<double>(forward ? ep.exchanges_forward : ep.exchanges_backward);
  if (n <= 0) return;
  if (s.full_) {
    const double t0 = sg4::Engine::get_clock();
    s.ep_barrier_[static_cast<size_t>(stage_ * s.ep_groups() + s.ep_group(replica_, stage_))]->wait();
    acc.comm_s += sg4::Engine::get_clock() - t0;  // waiting for the group's slowest member
  }
  const double start = sg4::Engine::get_clock();
  sg4::Host* me = sg4::this_actor::get_host();
  if (ep.latency_s > 0) sg4::this_actor::sleep_for(n * ep.latency_s);
  std::vector<sg4::CommPtr> comms;
  for (const auto& peer : s.ep_peers_[static_cast<size_t>(s.actor_index(replica_, stage_))]) {
    const double bytes = n * (peer.other_node ? ep.node_bytes * s.nic_sharers_ : ep.peer_bytes * peer.members);
    if (bytes >= 1) comms.push_back(sg4::Comm::sendto_async(me, peer.host, static_cast<uint64_t>(std::round(bytes))));
  }
  sg4::Comm::wait_all(comms);
  // The window's compute ran beside them on the GPU (the actor's only work: a timed wait).
  if (const double left = start + window_s - sg4::Engine::get_clock(); left > 0) sg4::this_actor::sleep_for(left);
  const double end = sg4::Engine::get_clock();
  // The window is compute (its folded TP share as TP); what the exchanges take beyond it is exposed
  // expert-parallel communication, reported with TP and CP's.
  const double hidden = std::min(end - start, window_s);
  const double share = s.compute_tp_share(cost);
  acc.compute_s += hidden * (1 - share);
  acc.tp_comm_s += hidden * share + (end - start - hidden);
  if (trace) s.trace(s.track_of(replica_, stage_, Simulation::kTp), "EP all-to-all " + name, "tp", start, end);
}

void StageActor::draw_routing() {
  const Simulation& s = *sim_;
  routing_.clear();
  const auto& chunks = s.costs_.stages[static_cast<size_t>(stage_)].chunks;
  bool skewed = false;
  for (const auto& c : chunks) skewed |= s.ep_flows_ && c.ep.routing_cv > 0;
  if (!skewed) return;
  std::mt19937_64 rng(s.opt_.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(stage_ * 65537 + s.ep_group(replica_, stage_)));
  std::normal_distribution<double> normal;
  routing_.assign(static_cast<size_t>(s.v_ * s.m_ * 2), 1.0);
  for (int64_t c = 0; c < s.v_; ++c) {
    const model::EpLayerTraffic& ep = chunks[static_cast<size_t>(c)].ep;
    auto load = [&](double z) {
      const double l = 1 + z * ep.routing_cv;
      return ep.capacity_factor > 0 ? std::min(l, ep.capacity_factor) : l;
    };
    for (int64_t i = 0; i < s.m_ * 2; ++i) {
      double z = -std::numeric_limits<double>::infinity();
      for (int64_t r = 0; r < s.sc_.parallel.ep; ++r) z = std::max(z, normal(rng));
      routing_[static_cast<size_t>(c * s.m_ * 2 + i)] = load(z) / load(ep.routing_z);
    }
  }
}

double StageActor::moe_compute_s(const model::ChunkCost& cost, bool forward, int64_t chunk, int64_t micro_batch) const {
  const model::EpLayerTraffic& ep = cost.ep;
  const double pass = forward ? cost.forward_s : cost.backward_s;
  if (!sim_->ep_flows_ || ep.exchanges_forward == 0) return pass;
  const double folded = forward ? ep.exposed_forward_s + ep.window_forward_s : ep.exposed_backward_s + ep.window_backward_s;
  double skew = 0;
  if (!routing_.empty()) {
    const double f = routing_[static_cast<size_t>((chunk * sim_->m_ + micro_batch) * 2 + (forward ? 0 : 1))];
    skew = (forward ? ep.expert_forward_s : ep.expert_backward_s) * (f - 1);
  }
  return std::max(0.0, pass - folded + skew);
}

void StageActor::forward(const parallel::PipelineOp& op, StepAccount& acc, bool trace, Send send_mode) {
  Simulation& s = *sim_;
  const int64_t g = parallel::model_chunk(stage_, op.chunk, s.p_);
  const auto& cost = s.costs_.stages[stage_].chunks[op.chunk];
  await_send(0, acc);
  if (g > 0) receive(s.act_[replica_][g][op.micro_batch], acc, trace, cost.forward_s);
  const std::string name = pass_name('F', op, trace);
  const double slow = slowdown();
  if (s.ep_flows_) exchange(cost, true, cost.ep.window_forward_s * slow, acc, name, trace);
  P2pSlot* out = g + 1 < s.p_ * s.v_ ? &s.act_[replica_][g + 1][op.micro_batch] : nullptr;
  finish_pass(moe_compute_s(cost, true, op.chunk, op.micro_batch) * slow, s.compute_tp_share(cost), acc, "forward", name, trace,
              out, (g + 1) % s.p_, cost.activation_bytes, 0, send_mode);
}

void StageActor::backward(const parallel::PipelineOp& op, bool last_micro_batch, StepAccount& acc, bool trace, Send send_mode) {
  Simulation& s = *sim_;
  const int64_t g = parallel::model_chunk(stage_, op.chunk, s.p_);
  const auto& cost = s.costs_.stages[stage_].chunks[op.chunk];
  await_send(1, acc);
  // The first part of the backward: the whole pass, or its first real bucket's share (below).
  if (g + 1 < s.p_ * s.v_)
    receive(s.grad_[replica_][g][op.micro_batch], acc, trace, s.first_bucket_s(cost.backward_s));
  const std::string name = pass_name('B', op, trace);
  const double slow = slowdown();
  if (s.ep_flows_) exchange(cost, false, cost.ep.window_backward_s * slow, acc, name, trace);
  const double seconds = moe_compute_s(cost, false, op.chunk, op.micro_batch) * slow;
  P2pSlot* out = g > 0 ? &s.grad_[replica_][g - 1][op.micro_batch] : nullptr;
  const int64_t to_stage = (g - 1 + s.p_) % s.p_;
  const bool overlap = s.sc_.parallel.overlap_grad_reduce && s.replicas_total() > 1;
  double released = 0;  // of `seconds`, what the bucketed last backward has already run
  if (last_micro_batch && overlap) {
    // The last backward of a chunk finalises its gradients bucket by bucket: each real bucket's
    // reduction starts as soon as its part of the backward is done. A simulated bucket stands for
    // k = calls_per_job_ real ones and is released early by the time the real stack spends on the
    // first k - 1 of them (never before the first real bucket is ready, never out of order): the
    // last real bucket's reduction then ends when the real stack's does, whether the reductions
    // keep up with the backward (exposed: one real bucket) or not (exposed: reduce - backward + one
    // real bucket's backward), as the closed form counts them.
    const int64_t nb = s.buckets_per_chunk_;
    const double bytes = s.costs_.stages[stage_].grad_bytes * s.chunk_share(stage_, op.chunk) / static_cast<double>(nb);
    const double k = std::max(1.0, s.calls_per_job_);
    const double real_backward = seconds / (k * static_cast<double>(nb));
    const double real_reduce = model::grad_reduce_time_s(bytes / k, s.sc_.parallel, s.sc_.cluster);
    for (int64_t b = 0; b < nb; ++b) {
      const double ready = static_cast<double>(b + 1) * k * real_backward - (k - 1) * real_reduce;
      const double t = std::clamp(ready, std::max(released, real_backward), seconds);
      bucket_ = true;  // a collective follows at once (Simulation::submit_bound)
      compute(t - released, s.compute_tp_share(cost), acc, "backward", name, trace);
      bucket_ = false;
      released = t;
      collective(s.grad_kind(), bytes, s.calls_per_job_,
                 trace ? "grad bucket " + std::to_string(op.chunk) + "." + std::to_string(b) : std::string(), trace, true);
    }
  }
  finish_pass(seconds - released, s.compute_tp_share(cost), acc, "backward", name, trace, out, to_stage, cost.activation_bytes, 1,
              send_mode);
}

void StageActor::finish_pass(double seconds, double tp_share, StepAccount& acc, const char* category, const std::string& name,
                             bool trace, P2pSlot* slot, int64_t to_stage, double bytes, int direction, Send mode) {
  if (deferred_.slot != nullptr) {
    compute(seconds, tp_share, acc, category, name, trace);
    send_with_deferred(slot, to_stage, bytes, acc, trace);
  } else if (mode == Send::kDeferred) {
    compute(seconds, tp_share, acc, category, name, trace);
    if (slot != nullptr) deferred_ = {slot, to_stage, bytes};
  } else if (mode == Send::kAsync) {
    compute(seconds, tp_share, acc, category, name, trace);
    if (slot != nullptr) pass_send(*slot, to_stage, bytes, direction, true, acc, trace);
  } else {
    const double latency = slot != nullptr ? p2p_call(to_stage, bytes).latency_s : 0;
    const bool waited = compute(seconds, tp_share, acc, category, name, trace, latency);
    if (slot != nullptr) send(*slot, to_stage, bytes, acc, trace, waited);
  }
}


void StageActor::run_zero3_passes(const std::vector<parallel::PipelineOp>& ops, const model::StageCost& stage_cost,
                                  StepAccount& acc, bool trace) {
  Simulation& s = *sim_;
  auto layers_of = [&](const parallel::PipelineOp& op) {
    return std::max<int64_t>(1, stage_cost.chunks[op.chunk].layers);
  };
  // One layer's share of the stage's `total` bytes (its weights, or its gradients) in op's chunk.
  auto layer_bytes = [&](double total, const parallel::PipelineOp& op) {
    return total * s.chunk_share(stage_, op.chunk) / static_cast<double>(layers_of(op));
  };
  auto gather = [&](const parallel::PipelineOp& op) {
    return collective(parallel::CollectiveKind::kAllGather, layer_bytes(stage_cost.param_bytes, op), 1, "param gather",
                      trace, false);
  };
  std::vector<CommJobPtr> next = ops.empty() ? std::vector<CommJobPtr>{} : gather(ops[0]);
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const int64_t g = parallel::model_chunk(stage_, op.chunk, s.p_);
    const auto& cost = s.costs_.stages[stage_].chunks[op.chunk];
    const bool fwd = op.pass == parallel::Pass::kForward;
    await_send(fwd ? 0 : 1, acc);
    if (fwd && g > 0) receive(s.act_[replica_][g][op.micro_batch], acc, trace);
    if (!fwd && g + 1 < s.p_ * s.v_) receive(s.grad_[replica_][g][op.micro_batch], acc, trace);
    const int64_t n = layers_of(op);
    const double unit = (fwd ? cost.forward_s : cost.backward_s) * slowdown() / static_cast<double>(n);
    const std::string name = pass_name(fwd ? 'F' : 'B', op, trace);
    const double grad = layer_bytes(stage_cost.grad_bytes, op);
    // Every layer after the pass's first pays its calls' NCCL latency on the critical path, as the
    // closed form charges it (model::zero3_layer_latency); the flows carry the rest.
    const model::Zero3Latency lat =
        model::zero3_layer_latency(layer_bytes(stage_cost.param_bytes, op), grad, s.sc_.parallel, s.sc_.cluster);
    const double layer_latency = fwd ? lat.forward_s : lat.backward_s;
    for (int64_t l = 0; l < n; ++l) {
      std::vector<CommJobPtr> cur = std::move(next);
      next.clear();
      if (l + 1 < n) next = gather(op);
      else if (i + 1 < ops.size()) next = gather(ops[i + 1]);
      for (const auto& job : cur) wait(job, acc);
      const double waited = l > 0 ? layer_latency : 0;
      if (compute(unit, s.tp_share(cost), acc, fwd ? "forward" : "backward", name, trace, waited)) acc.comm_s += waited;
      if (!fwd) collective(parallel::CollectiveKind::kReduceScatter, grad, 1, "grad reduce-scatter", trace, true);
    }
    const bool async = s.overlap_p2p_ && turns_after(ops, i);
    if (fwd && g + 1 < s.p_ * s.v_) pass_send(s.act_[replica_][g + 1][op.micro_batch], (g + 1) % s.p_, cost.activation_bytes, 0, async, acc, trace);
    if (!fwd && g > 0) pass_send(s.grad_[replica_][g - 1][op.micro_batch], (g - 1) % s.p_, cost.activation_bytes, 1, async, acc, trace);
  }
}

void StageActor::operator()() {
  Simulation& s = *sim_;
  rng_.seed(s.opt_.seed * 1000003ULL + static_cast<uint64_t>(s.actor_index(replica_, stage_)));
  const int64_t me = s.actor_index(replica_, stage_);
  if (s.timed_transfers_) quiet_ = &s.quiet_[static_cast<size_t>(me)];
  const auto& ops = s.plan_[stage_];
  const auto& stage_cost = s.costs_.stages[stage_];
  const bool multi = s.replicas_total() > 1;
  const bool zero3 = s.sc_.parallel.zero == 3 && multi;
  // ZeRO-1/2: the parameter all-gather under the next step's first forward (ParallelSpec).
  const bool gather_overlapped = s.sc_.parallel.overlap_grad_reduce && s.sc_.parallel.overlap_param_gather;
  draw_routing();
  // Backward count per chunk, to know which backward is a chunk's last.
  std::vector<int64_t> backwards(static_cast<size_t>(s.v_), 0);
  std::vector<CommJobPtr> param_gather;        // ZeRO-1/2: parameter all-gather after the optimizer
  std::vector<CommJobPtr> param_gather_first;  // its first bucket, when it overlaps the next forward
  for (int64_t step = 0; step < s.opt_.steps; ++step) {
    const bool trace = s.traced(replica_, step);
    const double step_start = sg4::Engine::get_clock();
    StepAccount acc;
    std::fill(backwards.begin(), backwards.end(), 0);
    pending_.clear();
    // ZeRO-1/2: the parameters all-gathered after the last optimizer step. Without overlap the step
    // cannot start before they are there; with it (Megatron's overlap_param_gather) each bucket is
    // needed by the first forward that uses it: they are awaited when the first forward is done.
    // The first bucket is needed by the first layer: it is awaited before the step starts.
    std::vector<CommJobPtr> gathered_by_first_forward;
    for (const auto& job : param_gather_first) wait(job, acc);
    param_gather_first.clear();
    for (const auto& job : param_gather) {
      if (!gather_overlapped) wait(job, acc);
      else gathered_by_first_forward.push_back(job);
    }
    param_gather.clear();
    if (zero3) {
      run_zero3_passes(ops, stage_cost, acc, trace);
    } else {
      // Without overlap_p2p_comm only a steady-state forward waits for the next backward's send:
      // the last warm-up forward (the turn into the cool-down when every forward is warm-up, m == p)
      // goes at once, as Megatron's send_forward_recv_forward sends it; deferred, the backward after
      // it would wait for a gradient that needs it.
      const bool batched = s.v_ > 1 && !s.overlap_p2p_;
      const int64_t warmup = batched ? parallel::interleaved_warmup(s.p_, s.m_, s.v_, stage_) : 0;
      int64_t forwards = 0;
      if (s.timed_transfers_) {
        // The shortest backward part a collective can follow (backward's buckets, below).
        double bucket = std::numeric_limits<double>::infinity();
        for (const auto& c : stage_cost.chunks) bucket = std::min(bucket, s.first_bucket_s(c.backward_s));
        s.bucket_s_[static_cast<size_t>(me)] = std::isfinite(bucket) ? bucket : 0;
      }
      for (size_t i = 0; i < ops.size(); ++i) {
        const auto& op = ops[i];
        if (s.timed_transfers_) s.mid_passes_[static_cast<size_t>(me)] = i + 1 < ops.size();
        const bool turns = turns_after(ops, i);
        const bool is_forward = op.pass == parallel::Pass::kForward;
        const bool steady = is_forward && forwards >= warmup;
        if (is_forward) ++forwards;
        const Send mode = s.overlap_p2p_ && turns ? Send::kAsync
                          : batched && turns && steady ? Send::kDeferred
                                                       : Send::kBlocking;
        if (is_forward) {
          forward(op, acc, trace, mode);
          for (const auto& job : gathered_by_first_forward) wait(job, acc);
          gathered_by_first_forward.clear();
        } else {
          const bool last = ++backwards[op.chunk] == s.m_;
          backward(op, last, acc, trace, mode);
        }
      }
    }
    if (s.timed_transfers_) s.mid_passes_[static_cast<size_t>(me)] = 0;
    for (const auto& job : gathered_by_first_forward) wait(job, acc);
    await_send(0, acc);
    await_send(1, acc);
    if (multi && !zero3 && !(s.sc_.parallel.overlap_grad_reduce)) {
      // No overlap: the whole gradient is reduced after the last backward.
      collective(s.grad_kind(), stage_cost.grad_bytes, s.real_buckets(stage_), "grad reduce", trace, true);
    }
    for (const auto& job : pending_) wait(job, acc);
    pending_.clear();
    if (s.dp_overlap_tax_s_ > 0) {
      const double t0 = sg4::Engine::get_clock();
      sg4::this_actor::sleep_for(s.dp_overlap_tax_s_);
      acc.comm_s += sg4::Engine::get_clock() - t0;
    }
    // Optimizer step on this GPU's (shard of the) states.
    const double opt_start = sg4::Engine::get_clock();
    // The fixed per-step cost (data loading, logging, step launch) is counted with the optimizer:
    // the four parts of the contract's breakdown still add up to the step.
    const double tail_s = stage_cost.optimizer_s + s.costs_.step_overhead_s;
    if (tail_s > 0) sg4::this_actor::sleep_for(tail_s);
    acc.optimizer_s += sg4::Engine::get_clock() - opt_start;
    if (trace) s.trace(s.track_of(replica_, stage_, Simulation::kCompute), "optimizer + fixed", "optimizer", opt_start, sg4::Engine::get_clock());
    if (multi && s.sc_.parallel.zero >= 1 && s.sc_.parallel.zero <= 2) {
      // Megatron's overlap_param_gather: bucket by bucket, each needed by the first layer it holds;
      // the first bucket before the step's first layer, the others under the first forward.
      const double real = s.real_buckets(stage_);
      if (gather_overlapped && real > 1) {
        param_gather_first = collective(parallel::CollectiveKind::kAllGather, stage_cost.param_bytes / real, 1,
                                        "param all-gather (first bucket)", trace, false);
        param_gather = collective(parallel::CollectiveKind::kAllGather, stage_cost.param_bytes * (1 - 1 / real), real - 1,
                                  "param all-gather", trace, false);
      } else {
        param_gather = collective(parallel::CollectiveKind::kAllGather, stage_cost.param_bytes, real,
                                  "param all-gather", trace, false);
      }
    }
    // Step end: every stage of every simulated replica (gradient-norm all-reduce).
    const double b0 = sg4::Engine::get_clock();
    s.step_barrier_->wait();
    const double now = sg4::Engine::get_clock();
    acc.bubble_s += now - b0;
    if (trace && now > b0) s.trace(s.track_of(replica_, stage_, Simulation::kCompute), "step-end wait", "bubble", b0, now);
    if (trace && me == 0) {
      // Step markers: a slice per step on the "steps" track and an instant across the whole trace.
      s.trace(0, "step " + std::to_string(step), "step", step_start, now);
      s.result_.trace.push_back({"step " + std::to_string(step) + " end", "step", 0, now, 0, 'i', 0});
    }
    s.accounts_[me][step] = acc;
    if (me == 0) {
      s.step_end_[step] = now;
      s.steps_done_ = step + 1;
      if (s.opt_.on_step) s.opt_.on_step(step + 1, s.opt_.steps);
      if (s.opt_.stop && *s.opt_.stop) s.stop_requested_ = true;
      // Steady state: stop here, the remaining steps are copies (Simulation::run). Not before
      // the traced steps are done.
      if (!s.stop_requested_ && s.can_replicate() && step + 1 < s.opt_.steps && step + 1 >= s.opt_.trace_steps &&
          s.steady_before(step)) {
        s.steady_step_ = step;
        s.stop_requested_ = true;
      }
    }
    // Every actor reads the flag after the barrier, so all stop at the same step boundary.
    s.step_barrier_->wait();
    if (s.stop_requested_) break;
  }
  for (const auto& job : param_gather_first) job->done->acquire();
  for (const auto& job : param_gather) job->done->acquire();
  // Shut the communication actors down.
  for (int64_t rail = 0; rail < s.rails_; ++rail) {
    auto bye = std::make_shared<CommJob>();
    bye->exit = true;
    bye->rail = rail;
    submit(bye, false);
  }
  if (s.overlap_p2p_)
    for (int dir = 0; dir < 2; ++dir) {
      auto bye = std::make_shared<P2pJob>();
      bye->exit = true;
      s.post_p2p(replica_, stage_, dir, std::move(bye));
    }
  ++s.finished_stage_actors_;
}

RunResult Simulation::run(World world) {
  const auto wall0 = std::chrono::steady_clock::now();
  if (!world.engine) world = make_world(sc_.cluster);
  auto engine = std::move(world.engine);
  platform_ = std::move(world.platform);

  p_ = sc_.parallel.pp;
  v_ = sc_.parallel.schedule == model::Schedule::kInterleaved ? sc_.parallel.virtual_stages : 1;
  m_ = costs_.micro_batches;
  if (static_cast<int64_t>(costs_.stages.size()) != p_)
    throw std::logic_error("step costs have " + std::to_string(costs_.stages.size()) + " stages, expected " + std::to_string(p_));
  for (const auto& st : costs_.stages)
    if (static_cast<int64_t>(st.chunks.size()) != v_) throw std::logic_error("step costs: wrong chunk count per stage");
  full_ = resolve_fidelity(sc_, opt_.fidelity) == config::Fidelity::kFull;
  replicas_ = full_ ? sc_.parallel.dp : 1;
  result_.fidelity = full_ ? "full" : "symmetric";
  result_.network_model = platform::kNetworkModel;
  plan_ = parallel::build_schedule(sc_.parallel.schedule, p_, m_, v_);
  buckets_per_chunk_ = std::max<int64_t>(1, resolve_buckets(costs_.stages[0], sc_.parallel, opt_.buckets > 0 ? opt_.buckets : sc_.gradient_buckets) / v_);
  calls_per_job_ = std::max(1.0, real_buckets(0) / static_cast<double>(buckets_per_chunk_ * v_));

  // Critical stage: the most compute + optimizer per step (ties: the first).
  double worst = -1;
  for (int64_t st = 0; st < p_; ++st) {
    double busy = costs_.stages[st].optimizer_s;
    for (const auto& c : costs_.stages[st].chunks) busy += static_cast<double>(m_) * (c.forward_s + c.backward_s);
    if (busy > worst * (1 + 1e-12)) {
      worst = busy;
      critical_stage_ = st;
    }
  }

  // Transfer slots: one per (replica, model chunk, micro-batch, direction).
  const int64_t chunks = p_ * v_;
  act_.assign(replicas_, std::vector<std::vector<P2pSlot>>(chunks, std::vector<P2pSlot>(m_)));
  grad_ = act_;
  const int64_t actors = replicas_ * p_;
  // Every TP rank has its own DP ring and pipeline transfers, on its own rail, and all ranks' traffic
  // is the same. Only TP rank 0's is simulated, by one of three rules:
  //  - built fat-tree or shared fabrics put whole nodes under each leaf, so every switch link carries
  //    all tp rails alike; under max-min fairness each rail gets 1/tp of such a link. Those links run
  //    at 1/tp of their bandwidth (tenants then take their load of that) and one rail is exact.
  //  - elsewhere, where rails never compete (no oversubscription, no tenants) one rail is exact too;
  //  - otherwise (rail-optimised fabric with oversubscription or tenants, platform files of unknown
  //    shape) every rail is simulated, one communication actor each. Exact, and much slower.
  const auto& cl = sc_.cluster;
  //  (ECMP hashes each rail's flows onto its own cables: no rule holds, every rail is simulated.)
  const bool built_whole_node_leaves =
      cl.platform_file.empty() && cl.topology != hardware::Topology::kRailOptimized && !cl.ecmp;
  const bool rails_compete = cl.topology == hardware::Topology::kShared || cl.oversubscription > 1 ||
                             (sc_.contention && sc_.contention->tenants > 0) || !cl.platform_file.empty() || cl.ecmp;
  rails_ = 1;
  if (layout_.tp > 1 && built_whole_node_leaves) {
    std::set<sg4::Link*> scaled;
    for (const auto* links : {&platform_->fabric_links(), &platform_->shared_links()})
      for (auto* l : *links)
        if (scaled.insert(l).second) l->set_bandwidth(l->get_bandwidth() / static_cast<double>(layout_.tp));
  } else if (rails_compete) {
    rails_ = layout_.tp;
  }
  queues_.resize(actors * rails_);
  for (int64_t i = 0; i < actors * rails_; ++i) queue_ready_.push_back(std::make_shared<Signal>());
  overlap_p2p_ = sc_.parallel.overlap_p2p_comm && v_ > 1 && p_ > 1;
  if (overlap_p2p_) {
    p2p_queues_.resize(actors * 2);
    for (int64_t i = 0; i < actors * 2; ++i) p2p_ready_.push_back(std::make_shared<Signal>());
  }
  if (full_)
    for (int64_t i = 0; i < p_ * rails_; ++i) dp_barrier_.push_back(sg4::Barrier::create(static_cast<unsigned>(replicas_)));
  step_barrier_ = sg4::Barrier::create(static_cast<unsigned>(actors));
  accounts_.assign(actors, std::vector<StepAccount>(opt_.steps));
  step_end_.assign(opt_.steps, 0);

  // Stragglers: `count` GPUs drawn (seeded) among all GPUs; a simulated stage runs at the speed of
  // its slowest member, since every collective it joins waits for that member.
  straggle_.assign(actors, 1.0);
  if (sc_.stragglers && sc_.stragglers->count > 0) {
    std::mt19937_64 rng(opt_.seed);
    const int64_t gpus = sc_.cluster.gpus();
    std::uniform_int_distribution<int64_t> pick(0, gpus - 1);
    for (int64_t k = 0; k < sc_.stragglers->count; ++k) {
      const int64_t rank = pick(rng);
      const int64_t stage = rank / (layout_.tp * layout_.cp * layout_.dp);
      const int64_t replica = full_ ? (rank / (layout_.tp * layout_.cp)) % layout_.dp : 0;
      straggle_[actor_index(replica, stage)] = sc_.stragglers->slowdown;
    }
  }
  start_straggler_episodes();
  plan_ep();
  if (!cl.platform_file.empty() && cl.gpus() > 256) check_used_routes();
  take_census();
  // The quiet bounds hold where passes run as planned: no per-pass jitter or straggler episodes
  // (stragglers altogether, to keep the rule short), no expert exchanges, no ZeRO-3 gathers.
  timed_transfers_ = census_ && !sc_.stragglers && !ep_flows_ && !(sc_.parallel.zero == 3 && replicas_total() > 1);
  if (timed_transfers_) {
    quiet_.assign(static_cast<size_t>(replicas_ * p_), Quiet{});
    comm_jobs_.assign(static_cast<size_t>(replicas_ * p_ * rails_), 0);
    p2p_jobs_.assign(static_cast<size_t>(replicas_ * p_), 0);
    mid_passes_.assign(static_cast<size_t>(replicas_ * p_), 0);
    bucket_s_.assign(static_cast<size_t>(replicas_ * p_), 0);
  }

  // A pass is a timed wait (StageActor::compute): exact only while no two stage actors share a GPU.
  {
    std::set<const sg4::Host*> gpus;
    for (int64_t r = 0; r < replicas_; ++r)
      for (int64_t st = 0; st < p_; ++st)
        if (!gpus.insert(stage_host(r, st)).second)
          throw std::logic_error("two simulated stages on one GPU host: " + stage_host(r, st)->get_name());
  }
  result_.tracks.push_back("steps");
  result_.track_groups.push_back(0);
  for (int64_t r = 0; r < replicas_; ++r) {
    for (int64_t st = 0; st < p_; ++st) {
      // The simulated GPU is the first rank of its TP x CP group (the others run the same passes).
      const int64_t rank = layout_.rank(0, 0, r, st);
      const std::string gpu = "GPU " + std::to_string(rank) + " (stage " + std::to_string(st) + ")";
      for (const char* stream : {"", " TP stream", " DP stream"}) {
        result_.tracks.push_back(gpu + stream);
        result_.track_groups.push_back(r + 1);
      }
      sg4::Host* host = stage_host(r, st);
      sg4::Actor::create("stage-" + std::to_string(r) + "-" + std::to_string(st), host, StageActor(this, r, st));
      for (int64_t rail = 0; rail < rails_; ++rail)
        sg4::Actor::create("comm-" + std::to_string(r) + "-" + std::to_string(st) + "-" + std::to_string(rail),
                           host_of_rank(layout_.rank(rail, 0, r, st)), CommActor(this, r, st, rail));
      if (overlap_p2p_)
        for (int dir = 0; dir < 2; ++dir)
          sg4::Actor::create("p2p-" + std::to_string(r) + "-" + std::to_string(st) + (dir == 0 ? "-fwd" : "-bwd"), host,
                             P2pActor(this, p2p_index(r, st, dir)));
      for (int64_t c = 0; c < v_; ++c) {
        const int64_t g = parallel::model_chunk(st, c, p_);
        for (int64_t mb = 0; mb < m_; ++mb) {
          const std::string key = std::to_string(r) + "/" + std::to_string(g) + "/" + std::to_string(mb);
          act_[r][g][mb] = P2pSlot{"act/" + key, host, std::make_shared<Signal>(), {}};
          grad_[r][g][mb] = P2pSlot{"grad/" + key, host, std::make_shared<Signal>(), {}};
        }
      }
    }
  }
  noise_ = start_contention(sc_, *platform_, opt_.seed);
  if (!census_) noise_ = nullptr;  // without classes every edge is simulated: nothing to reclass
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  start_watchdog();

  engine->run();

  if (finished_stage_actors_ != actors)
    throw std::runtime_error("simulation stalled: " + std::to_string(actors - finished_stage_actors_) +
                             " stage actors never finished (an activity never completed)");
  for (const auto& per_replica : {&act_, &grad_})
    for (const auto& per_chunk : *per_replica)
      for (const auto& slots : per_chunk)
        for (const auto& slot : slots)
          if (slot.landed != nullptr && slot.landed->available() != 0)
            throw std::runtime_error("simulation ended with undelivered messages in " + slot.name);

  // Steady state reached: the remaining steps repeat the last checked one (steady_before).
  if (steady_step_ >= 0 && steps_done_ == steady_step_ + 1) {
    const int64_t model_step = steady_step_ - 1;
    const double d = step_end_[model_step] - step_end_[model_step - 1];
    for (int64_t k = steps_done_; k < opt_.steps; ++k) {
      for (auto& acc : accounts_) acc[k] = acc[model_step];
      step_end_[k] = step_end_[k - 1] + d;
    }
    result_.steps_replicated = opt_.steps - steps_done_;
    steps_done_ = opt_.steps;
    if (opt_.on_step) opt_.on_step(opt_.steps, opt_.steps);
  }

  // The critical GPU: the most compute + optimizer over the run as simulated (a straggler changes
  // which one it is); step records come from it, sync wait is averaged over simulated GPUs.
  const int64_t done = steps_done_;
  int64_t critical = actor_index(0, critical_stage_);
  double busiest = -1;
  for (int64_t i = 0; i < actors; ++i) {
    double busy = 0;
    for (int64_t k = 0; k < done; ++k)
      busy += accounts_[i][k].compute_s + accounts_[i][k].tp_comm_s + accounts_[i][k].optimizer_s;
    if (busy > busiest * (1 + 1e-12)) {
      busiest = busy;
      critical = i;
    }
  }
  critical_stage_ = critical % p_;
  double prev_end = 0;
  for (int64_t st = 0; st < done; ++st) {
    const StepAccount& a = accounts_[critical][st];
    StepRecord rec;
    rec.step = st;
    rec.start_s = prev_end;
    rec.time_s = step_end_[st] - prev_end;
    rec.compute_s = a.compute_s;
    rec.tp_comm_s = a.tp_comm_s;
    rec.optimizer_s = a.optimizer_s;
    rec.exposed_comm_s = a.comm_s;
    rec.bubble_s = a.bubble_s;
    double wait_sum = 0;
    for (int64_t i = 0; i < actors; ++i) wait_sum += accounts_[i][st].comm_s + accounts_[i][st].bubble_s;
    rec.sync_wait_s = wait_sum / static_cast<double>(actors);
    result_.steps.push_back(rec);
    prev_end = step_end_[st];
  }
  for (int64_t r = 0; r < replicas_; ++r) {
    for (int64_t st = 0; st < p_; ++st) {
      GpuTotals t;
      t.replica = r;
      t.stage = st;
      for (int64_t k = 0; k < done; ++k) {
        const auto& a = accounts_[actor_index(r, st)][k];
        t.compute_s += a.compute_s;
        t.tp_comm_s += a.tp_comm_s;
        t.optimizer_s += a.optimizer_s;
        t.comm_wait_s += a.comm_s;
        t.bubble_s += a.bubble_s;
      }
      result_.gpus.push_back(t);
    }
  }
  result_.critical_stage = critical_stage_;
  result_.simulated_gpus = actors;
  result_.interrupted = done < opt_.steps;
  // Flows per step: p2p = 2 per (micro-batch, chunk boundary); DP from the plans.
  result_.p2p_flows_per_step = 2 * m_ * (chunks - 1) * replicas_;
  int64_t dp = 0;
  if (replicas_total() > 1) {
    for (int64_t st = 0; st < p_; ++st) {
      int64_t per_bucket = 0;
      for (const auto& ph : dp_phases(st, grad_kind(), 1.0)) per_bucket += static_cast<int64_t>(ph.size());
      dp += per_bucket * rails_ * (sc_.parallel.overlap_grad_reduce ? buckets_per_chunk_ * v_ : 1);
    }
  }
  result_.dp_flows_per_step = dp;
  result_.dp_flow_plans = static_cast<int64_t>(flow_plans_.size());
  result_.dp_flows_started = dp_flows_started_;
  result_.dp_flows_classed = dp_flows_classed_;
  result_.p2p_transfers_timed = p2p_timed_;
  result_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return std::move(result_);
}

void Simulation::start_watchdog() {
  const double bound = 3600.0 + 100.0 * closed_form_.step_s;
  sg4::Actor::create("watchdog", platform_->gpu(0, 0), [this, bound] {
    int64_t seen = -1;
    double since = 0;
    for (;;) {
      sg4::this_actor::sleep_for(bound / 10);
      const double now = sg4::Engine::get_clock();
      if (passes_done_ != seen) {
        seen = passes_done_;
        since = now;
      } else if (now - since >= bound) {
        sg4::Actor::kill_all();  // every other actor; the run then reports the stage actors that never finished
        return;
      }
    }
  })->daemonize();
}

void Simulation::start_straggler_episodes() {
  if (!sc_.stragglers || sc_.stragglers->episodes_per_gpu_hour <= 0) return;
  const auto spec = *sc_.stragglers;
  straggle_base_ = straggle_;
  episodes_active_.assign(straggle_.size(), 0);
  const double rate_per_s = spec.episodes_per_gpu_hour * static_cast<double>(sc_.cluster.gpus()) / 3600.0;
  auto rng = std::make_shared<std::mt19937_64>(opt_.seed * 0x2545F4914F6CDD1DULL + 17);
  auto set = [this, spec](int64_t a) {
    straggle_[static_cast<size_t>(a)] =
        straggle_base_[static_cast<size_t>(a)] * (episodes_active_[static_cast<size_t>(a)] > 0 ? spec.slowdown : 1.0);
  };
  sg4::Host* host = host_of_rank(0);
  sg4::Actor::create("straggler-episodes", host, [this, rng, rate_per_s, spec, set, host] {
    std::exponential_distribution<double> gap(rate_per_s);
    std::exponential_distribution<double> length(1.0 / spec.episode_s);
    std::uniform_int_distribution<int64_t> pick(0, sc_.cluster.gpus() - 1);
    for (;;) {
      sg4::this_actor::sleep_for(gap(*rng));
      const int64_t rank = pick(*rng);
      const int64_t stage = rank / (layout_.tp * layout_.cp * layout_.dp);
      const int64_t replica = full_ ? (rank / (layout_.tp * layout_.cp)) % layout_.dp : 0;
      const int64_t a = actor_index(replica, stage);
      const double duration = length(*rng);
      ++episodes_active_[static_cast<size_t>(a)];
      set(a);
      sg4::Actor::create("episode", host, [this, a, duration, set] {
        sg4::this_actor::sleep_for(duration);
        --episodes_active_[static_cast<size_t>(a)];
        set(a);
      })->daemonize();
    }
  })->daemonize();
}

}  // namespace

World::World() = default;
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;
World::~World() = default;

World make_world(const hardware::ClusterSpec& cluster) {
  World w;
  w.engine = platform::make_engine();
  w.platform = platform::Platform::build(*w.engine, cluster);
  return w;
}

RunResult simulate(const config::Scenario& scenario, const model::StepCosts& costs, const EngineOptions& options) {
  Simulation sim(scenario, costs, options);
  return sim.run(World{});
}

RunResult simulate(const config::Scenario& scenario, const model::StepCosts& costs, const EngineOptions& options,
                   World world) {
  Simulation sim(scenario, costs, options);
  return sim.run(std::move(world));
}

}  // namespace trainsim::engine
