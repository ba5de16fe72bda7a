// The plain descriptions of what is trained and how: model shape, parallel layout, training
// settings. Filled by config/ from the scenario YAML; read by everything else. No logic here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>
#include <string>

namespace trainsim::model {

enum class Ffn { kSwiglu, kGelu };
enum class Schedule { kGpipe, k1F1B, kInterleaved };
// Activation recomputation, lightest first: selective = Megatron's (the attention core);
// selective-op = torchtitan's per-op policy (matmul outputs kept but every second one, and the
// fused attention's outputs; everything else re-run); full = only each layer's input kept.
enum class Recompute { kNone, kSelective, kSelectiveOp, kFull };
enum class Precision { kFp32, kFp16, kBf16, kFp8 };
enum class Optimizer { kAdam, kSgd };
enum class Offload { kNone, kCpu, kNvme };
// What the loss over the logits holds at its peak (TrainingSpec::cross_entropy, memory only).
enum class CrossEntropy { kFused, kTorch, kChunked };
// How tokens reach their experts: NCCL all-to-all (one copy per expert rank, Megatron-Core's
// alltoall dispatcher) or DeepEP (deepseek-ai/DeepEP normal kernels: a token crosses InfiniBand once
// per destination node and is forwarded to that node's expert GPUs over NVLink; fp8 dispatch when
// training in fp8, bf16 combine).
enum class EpDispatcher { kAllToAll, kDeepEp };
// How the expert-parallel all-to-alls overlap compute: not at all (Megatron-Core's default), under
// the shared experts' GEMMs (--moe-shared-expert-overlap), or under another micro-batch's compute
// (DeepSeek-V3's DualPipe: a forward and a backward chunk paired, each one's all-to-all under the
// other's computation).
enum class EpOverlap { kNone, kSharedExperts, kMicroBatches };
// How context parallelism exchanges K and V (Transformer Engine / Megatron-Core cp_comm_type):
// kP2p = ring attention, each step's exchange under the attention of the chunk in hand;
// kAllGather = K and V all-gathered before the attention and their gradients reduce-scattered
// after it, exposed (Llama 3, Sec. 3.3.2); kAllToAll = DeepSpeed Ulysses: Q, K and V exchanged
// all-to-all from sequence- to head-split before the attention and the output back after it.
enum class CpComm { kP2p, kAllGather, kAllToAll };

// Mixture-of-experts feed-forward (issue 19): every layer from `first_dense_layers` on replaces
// the dense FFN with a router over `experts` routed experts, each token going to `top_k` of them,
// plus `shared_experts` every token goes through; every expert is an FFN of `expert_ffn_hidden`
// in the model's FFN kind (SwiGLU or GeLU). experts = 0: a dense model.
struct MoeSpec {
  int64_t experts = 0;
  int64_t top_k = 1;
  int64_t expert_ffn_hidden = 0;
  int64_t shared_experts = 0;
  int64_t first_dense_layers = 0;
  // Tokens an expert takes at most, as a multiple of its even share (top_k x tokens / experts);
  // the rest are dropped. 0 = dropless (every routed token is computed). Caps the routing
  // imbalance the slowest expert rank sees (model/compute.cpp).
  double capacity_factor = 0;
  // Node-limited routing: a token's experts on at most this many nodes of its expert-parallel
  // group (DeepSeek-V3: 4); 0 = any.
  int64_t max_nodes_per_token = 0;
};

// Multi-head latent attention (DeepSeek-V2/V3): queries from a q_lora_rank latent (0 = straight
// from the hidden state), keys and values from one kv_lora_rank latent, per head qk_nope_head_dim
// + qk_rope_head_dim for queries and keys (the rope part of the keys shared by the heads) and
// v_head_dim for values; the output projection from heads x v_head_dim. kv_lora_rank = 0: the
// usual multi-head / grouped-query attention.
struct MlaSpec {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// A decoder-only transformer, dense or mixture-of-experts.
struct ModelSpec {
  std::string preset;          // preset it started from, "" if none
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t ffn_hidden = 0;      // default 4*hidden (gelu) when a scenario gives none
  int64_t heads = 0;
  int64_t kv_heads = 0;        // grouped-query attention; = heads when not given
  int64_t head_dim = 0;        // per-head width; 0 = hidden / heads (Qwen3: 128 with 64 heads on 4096)
  int64_t vocab = 0;
  int64_t seq_len = 0;
  Ffn ffn = Ffn::kGelu;
  bool tied_embeddings = false;       // output layer shares the input embedding's weights
  bool learned_position_embedding = false;  // GPT-style s*h position table (Megatron Eq.2 counts it)
  // Dropout after attention and MLP (1-byte masks kept for the backward); unset = GPT-style gelu
  // models have it, Llama-style swiglu ones do not (model.dropout in a scenario).
  std::optional<bool> dropout;
  MoeSpec moe;
  MlaSpec mla;
  // Multi-token prediction modules (DeepSeek-V3, report Sec. 2.2): each predicts one more token
  // with one more transformer layer (the model's mixture-of-experts kind), a 2h x h projection and
  // the shared output head and loss, on the last pipeline stage. Not counted in model FLOPs or
  // parameters (the published 671B / 37B exclude them); they cost time and memory.
  int64_t mtp_modules = 0;
  bool is_moe() const { return moe.experts > 0; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  // Whether layer `i` (0-based) has the mixture-of-experts FFN.
  bool moe_layer(int64_t i) const { return is_moe() && i >= moe.first_dense_layers; }
  int64_t moe_layers() const { return is_moe() ? layers - moe.first_dense_layers : 0; }
};

struct ParallelSpec {
  int64_t tp = 1;              // tensor parallel (inside a node)
  int64_t pp = 1;              // pipeline stages
  int64_t dp = 1;              // data-parallel replicas
  int64_t cp = 1;              // context parallel
  // Expert parallel: the routed experts of each MoE layer split over ep ranks carved out of the
  // data-parallel ones (Megatron-Core: experts per rank = experts / ep; the expert weights' data
  // parallelism is dp x cp / ep). 1 = every rank holds every expert.
  int64_t ep = 1;
  // Expert tensor parallelism (Megatron-Core's --expert-tensor-parallel-size, "MoE parallel
  // folding"): the routed experts' FFNs split over expert_tp ranks instead of tp, and the expert
  // layers laid out on their own: etp fastest, then ep, then expert data parallelism, over the
  // stage's tp x cp x dp ranks, so an ep group is ep consecutive ranks expert_tp apart (with
  // expert_tp 1 and tp 2, ep 8 fills one node where the tp-cp-ep-dp order would span two).
  // 0 = tp, and ep carved out of dp x cp, tp x cp apart (the order before folding).
  int64_t expert_tp = 0;
  int64_t etp() const { return expert_tp > 0 ? expert_tp : tp; }
  // Rank distance between consecutive members of an ep group.
  int64_t ep_stride() const { return expert_tp > 0 ? expert_tp : tp * cp; }
  // Ranks holding the same experts (their states shard over these under ZeRO).
  int64_t expert_dp() const { return tp * cp * dp / (std::max<int64_t>(ep, 1) * etp()); }
  EpOverlap ep_overlap = EpOverlap::kNone;
  EpDispatcher ep_dispatcher = EpDispatcher::kAllToAll;
  // Megatron-Core's --recompute-modules (parallelism.recompute_modules), each re-run in the
  // backward instead of keeping its output: the MLA up-projections (Q, K, V rebuilt from the
  // latents), the norms (their outputs, the GEMM inputs, rebuilt from their inputs), the experts'
  // activation function (SwiGLU/GeLU output, the down-projection input, rebuilt from its input).
  // DeepSeek-V3 (report Sec. 3.2.3) recomputes the first two and caches the SwiGLU input only.
  bool recompute_mla_up_proj = false;
  bool recompute_layernorm = false;
  bool recompute_moe_act = false;
  int64_t micro_batch = 1;     // sequences per micro-batch
  Schedule schedule = Schedule::k1F1B;
  int64_t virtual_stages = 1;  // chunks per pipeline rank (interleaved only)
  int zero = 0;                // 0 plain DP | 1 | 2 | 3 (= FSDP full sharding)
  // Hybrid sharding: ZeRO's states sharded over `shard_degree` consecutive ranks of the dp x cp
  // group and replicated across its dp x cp / shard_degree shard groups (PyTorch FSDP
  // HYBRID_SHARD and torchtitan's data_parallel_shard_degree, Megatron-Core's
  // num_distributed_optimizer_instances, DeepSpeed's hpZ partitions, InternLM's zero1 groups).
  // Gradients are reduce-scattered within the shard group, then each rank's 1/shard_degree
  // share is all-reduced across the groups; parameters are gathered within the shard group.
  // 0 (default) = the whole dp x cp group.
  int64_t shard_degree = 0;
  int64_t shard_ranks() const { return shard_degree > 0 ? shard_degree : dp * cp; }
  bool hybrid_shard() const { return zero > 0 && shard_degree > 0 && shard_degree < dp * cp; }
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  bool overlap_grad_reduce = true;
  // ZeRO-1/2 with overlap_grad_reduce: the updated parameters' all-gather runs under the next
  // step's first forward, bucket by bucket (Megatron-Core's overlap_param_gather). False: the next
  // step starts once the gather is done (Megatron's default without --overlap-param-gather;
  // InternLM's hybrid ZeRO of 2023, whose parameter broadcast after the optimizer is not
  // overlapped: "TODO: support broadcast overlap", hybrid_zero_optim.py at c18bec9).
  bool overlap_param_gather = true;
  // Interleaved schedule: each steady-state pass's pipeline send and receive are posted
  // asynchronously and waited for only before the next pass in the same direction, so they run
  // under the pass in the other direction (Megatron-Core overlap_p2p_comm: on by default for the
  // interleaved schedule since 2023-05-31, f9283c5a "Add option to overlap p2p communication";
  // --no-overlap-p2p-communication turns it off; megatron/training/arguments.py at core_r0.8.0
  // turns it off for non-interleaved schedules). Warm-up and cool-down passes still wait for
  // their transfers. No effect without interleaving.
  bool overlap_p2p_comm = true;
  // ZeRO-2/3: gradients are accumulated unsharded, in the reduce precision, over the step's
  // micro-batches and reduce-scattered once after the last one, with the parameters kept
  // unsharded until then. torch.distributed.pipelining runs FSDP2 this way under every schedule
  // (stage.py backward_maybe_with_nosync: set_requires_gradient_sync(False) and
  // set_reshard_after_backward(False) until the last backward; _fsdp_param.py
  // to_accumulated_grad_if_needed upcasts the unsharded gradient to reduce_dtype), so torchtitan
  // with PP and FSDP does. Memory only: the reduce-scatter is costed once per step either way.
  bool defer_grad_reduce = false;
  // torch.distributed.pipelining's per-micro-batch tensors (torch/distributed/pipelining/stage.py,
  // PipelineStage, read at torch 2.6.0): every stage allocates a receive buffer per micro-batch for
  // its input activations (_prepare_forward_infra) and for the gradients of its outputs
  // (_prepare_backward_infra) and keeps them across steps; forward_one_chunk appends every
  // micro-batch's output to output_chunks on every stage, kept until the next step's
  // clear_runtime_states (the schedule returns them merged), so the last stage holds every
  // micro-batch's logits; the gradient of each received input stays in its buffer's .grad until
  // then too (_backward.py stage_backward reads val.grad). Megatron receives into tensors of the
  // moment and keeps no output. Also its interleaved warm-up, which has no all-forwards-first case
  // when there are as many micro-batches as stages (in_flight_micro_batches). Memory only; needs
  // pp > 1.
  bool pp_microbatch_buffers = false;
  // Full recompute of only the first N transformer layers of every pipeline chunk; the chunk's
  // other layers keep all their activations (Megatron-Core --recompute-granularity full
  // --recompute-method block --recompute-num-layers N: TransformerBlock._checkpointed_forward
  // checkpoints layer l only while l < N, per virtual pipeline chunk). -1 = every layer.
  // Only with Recompute::kFull.
  int64_t recompute_num_layers = -1;
  // Activations of the first N transformer layers copied to host memory during the forward and
  // back during the backward, double-buffered, each copy under the next layer's compute
  // (Megatron-Core --cpu-offloading --cpu-offloading-num-layers N through Transformer Engine's
  // CPU offload context). Megatron allows it only with 0 <= N < layers, no pipeline parallelism
  // and no activation recomputation (transformer_config.py __post_init__). 0 = none.
  int64_t activation_offload_layers = 0;
  // Under sequence parallelism the column-parallel linears (QKV, MLP-up, output layer) keep the
  // all-gathered input for their weight gradient, s b h instead of s b h / tp. DTensor's
  // ColwiseParallel does (the redistributed Replicate input is what the matmul saves), so
  // torchtitan's TP does; Megatron-Core keeps the shard and all-gathers it again in the backward
  // (Korthikanti et al. 2022 Sec. 4.2.2), the default.
  bool sp_save_gathered = false;
  // Under recompute selective-op, whether the per-op policy keeps the fused attention's output and
  // logsumexp (true: torchtitan's save list names every SDPA kernel it runs). False where the run's
  // SDPA kernel is not on the list, so the attention is recomputed in the backward: torchtitan
  // before b39377f (2025-12-01, "add all SDPA backends to op_sac_save_list") on Blackwell, where
  // it puts cuDNN attention first (models/attention.py at 6fc499f) and saves only the flash and
  // memory-efficient kernels' outputs (models/llama3/infra/parallelize.py _save_list).
  bool sac_saves_attention = true;
  // Context parallelism's K/V exchange (parallelism.cp_comm_type: p2p | all_gather | a2a). all_gather
  // is Transformer Engine's AttnFuncWithCPAndKVAllGather (Megatron-Core --cp-comm-type all_gather;
  // transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py @015d2257,
  // "KV all-gather between CP ranks is exposed. Refer section 3.3.2 of The Llama 3 Herd of
  // Models"): K and V gathered before the attention in the forward, gathered again in the backward
  // and dK, dV reduce-scattered after it, none of it under compute. What Llama 3 ran (Sec. 3.3.2:
  // "the all-gather communication latency is exposed in the critical path"). a2a is
  // AttnFuncWithCPAndQKVOA2A (same file; "Like DeepSpeed Ulysses, scatter attention heads across
  // the CP group, and gather to get full sequence of QKV"): Q, K, V all-to-all before the attention
  // and its output after it, dO before the backward and dQ, dK, dV after it, each exposed; the
  // attention then runs over the whole sequence on heads / (tp cp) heads (TE asserts both the
  // query and the key-value heads of a TP rank divide by cp).
  CpComm cp_comm = CpComm::kP2p;
  // Transformer layers of each pipeline chunk in model order (pp * virtual_stages entries; chunk i
  // on rank i % pp), as parallelism.layers_per_stage gives them; empty = the even split with the
  // short chunks at the two ends (model/memory.hpp chunk_layers).
  std::vector<int64_t> layers_per_chunk;
  int64_t gpus() const { return tp * pp * dp * cp; }
};

struct TrainingSpec {
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  int64_t global_batch = 1;      // sequences per optimizer step
  int64_t steps = 100;           // steps simulated in full
  double total_tokens = 0;       // whole run, for the projection; 0 = project `steps` only
  Offload offload = Offload::kNone;
  bool fp32_main_grads = false;  // Megatron accumulates the gradients in fp32 main_grad buffers (4 bytes/param, not 2)
  // Gradients reduced over data parallelism in fp32 (4 bytes a parameter on the wire) although the
  // passes run in 16 bits: torch FSDP MixedPrecision(reduce_dtype=float32) as torchtitan
  // (training.mixed_precision_reduce, only choice "float32") and composer >= 0.16.4 ("DEFAULT")
  // set it, and Llama 3 (paper Sec. 3.3.4: "reduce-scatter gradients in FP32"). Memory unchanged:
  // the fp32 copy exists only per bucket in flight. fp32_main_grads implies it (the buffer is fp32).
  bool grad_reduce_fp32 = false;
  double gpu_hour_price = 0;     // currency per GPU-hour; 0 = no cost line
  // Adam moments (and SGD momentum) in fp32, or in bf16 as current stacks can keep them
  // (Megatron-Core --exp-avg-dtype/--exp-avg-sq-dtype, torchao AdamW8bit-style); master weights stay fp32.
  Precision optimizer_state_precision = Precision::kFp32;
  // Per GPU. < 0 = built from its parts (model/memory.hpp RuntimeReserve: CUDA context and
  // library workspaces, NCCL buffers per communicator, allocator fragmentation); >= 0 = this
  // lump instead (training.runtime_reserve in a scenario).
  double runtime_reserve_bytes = -1;
  // Software stack (model/compute.hpp). Defaults = a current Megatron-Core/NeMo stack.
  bool flash_attention = true;   // fused causal attention; false = unfused BMMs + softmax + dropout over s^2 (Megatron-LM 2021/22)
  bool tp_comm_overlap = true;   // TP collectives pipelined with the GEMMs (TE userbuffers); false = Megatron-LM 2021/22
  // Without tp_comm_overlap: the column-parallel backward all-reduce runs asynchronously under the
  // weight-gradient GEMM (Megatron-LM from 2021-08-30, cf7efd4f5a, on by default since); false =
  // synchronous, every TP collective exposed (Megatron-LM at the SC21 paper's commit 6985e58).
  bool tp_async_backward = true;
  // Which fp8 implementation (memory only): Transformer Engine keeps the fp8 casts of the Linear
  // inputs for the backward and an fp8 copy + transpose of each weight; torchao's Float8Linear
  // (torchtitan) keeps the 16-bit inputs and weights and casts again in the backward.
  // training.fp8_stack: transformer-engine | torchao.
  bool fp8_torchao = false;
  // The loss over the logits (memory only). Fused (Megatron's vocab-parallel cross entropy,
  // flash-attn's xentropy as llm-foundry runs it): the fp32 logits once, gradients in place.
  // Torch (F.cross_entropy on .float() logits, torchtitan): log_softmax keeps its fp32 output and
  // its backward holds that, the incoming gradient and the input gradient at once: 12 bytes per
  // logit at the loss's peak. With the vocabulary sharded over TP, torch computes it through
  // DTensor's loss_parallel (torch/distributed/tensor/parallel/loss.py), the decomposition of
  // log_softmax with all-reduces: its backward builds the dense nll gradient, exp(output) and their
  // product beside the kept fp32 output, 16 bytes per logit. Chunked (Liger-Kernel's fused linear
  // cross-entropy, as HF/DeepSpeed stacks run it through AutoLigerKernelForCausalLM): the logits are
  // never whole; one chunk of tokens at a time, the input's and the weight's gradients made in the
  // forward (model/memory.cpp). training.cross_entropy: fused | torch | chunked.
  CrossEntropy cross_entropy = CrossEntropy::kFused;
  std::string attention_kernel;  // fused attention kernel: "fa1" .. "fa4", "cudnn"; "" = what a current stack runs on the GPU
  // Element-wise work (time only; cost_tables.yaml elementwise). Fused (the default: Megatron-Core /
  // Transformer Engine, torch.compile): one kernel per norm, activation and rotary embedding.
  // Eager (training.elementwise: eager): PyTorch eager mode, one kernel per operator as the Llama
  // reference code writes them (RoPE through fp32 complex multiplies, silu then multiply).
  // eager_norm (training.norm_kernel, default = elementwise): RMSNorm the same way (x.float(),
  // pow, mean, rsqrt, multiply, cast, weight); a stack may run an eager model with a fused norm
  // kernel (torchtitan's fused_rmsnorm). LayerNorm and GELU are single kernels either way.
  // eager_activation (training.activation_kernel, default = elementwise): SwiGLU as silu then
  // multiply, as stacks that fuse their norm and rotary kernels still run it (InternLM, nanotron).
  bool eager_elementwise = false;
  bool eager_norm = false;
  bool eager_activation = false;

  // Micro-batches per step per pipeline = global_batch / (dp * micro_batch).
  int64_t micro_batches(const ParallelSpec& p) const { return global_batch / (p.dp * p.micro_batch); }
};

// Bytes per element of the 16-bit (or 8/32-bit) compute copy of the weights and activations.
double bytes_per_value(Precision p);
// The attention heads one TP rank holds: query heads, and key-value heads (at least one: where tp
// exceeds kv_heads each rank keeps a copy of one).
struct RankHeads {
  int64_t query = 0;
  int64_t key_value = 0;
};
RankHeads rank_heads(const ModelSpec& m, const ParallelSpec& p);
// Whether cp_comm_type a2a (Ulysses) can scatter a TP rank's heads over cp: both its query and its
// key-value heads divide by cp (Transformer Engine asserts it, ParallelSpec::cp_comm).
bool a2a_splits_heads(const ModelSpec& m, const ParallelSpec& p);
const char* to_string(Ffn f);
const char* to_string(Schedule s);
const char* to_string(Recompute r);
const char* to_string(Precision p);
const char* to_string(Optimizer o);
const char* to_string(Offload o);
const char* to_string(EpOverlap o);
const char* to_string(CpComm c);  // the scenario's names: p2p | all_gather | a2a

}  // namespace trainsim::model
