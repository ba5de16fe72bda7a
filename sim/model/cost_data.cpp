#include "model/cost_data.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace trainsim::model {
namespace {

// The tables are part of the program: a malformed one is a build defect, reported by the first test.
[[noreturn]] void bad(const std::string& what) {
  throw std::logic_error("sim/hardware/data/cost_tables.yaml: " + what);
}

Curve read_curve(const YAML::Node& n, const std::string& where) {
  Curve c;
  if (!n) return c;
  if (!n.IsSequence()) bad(where + ": expected a list of [x, y]");
  for (const auto& p : n) {
    if (!p.IsSequence() || p.size() != 2) bad(where + ": expected [x, y]");
    c.points.emplace_back(p[0].as<double>(), p[1].as<double>());
  }
  std::sort(c.points.begin(), c.points.end());
  for (const auto& [x, y] : c.points)
    if (!(x > 0) || !(y > 0)) bad(where + ": points must be positive");
  return c;
}

// kernels.yaml, as transcribed: gemm.max_achievable.<precision>.frac_of_peak is the plateau;
// gemm.<precision>_grid_xla.points rows [m, n, k, TFLOP/s, ...] are measured shapes.
GemmTable read_gemm(const YAML::Node& gpu, const std::string& precision, const std::string& where) {
  GemmTable t;
  const YAML::Node plateau = gpu["gemm"]["max_achievable"][precision];
  if (!plateau || !plateau["frac_of_peak"]) return t;  // a `missing:` note: no measurement
  t.plateau = plateau["frac_of_peak"].as<double>();
  if (!(t.plateau > 0 && t.plateau <= 1)) bad(where + ": frac_of_peak must be in (0, 1]");
  const double peak = gpu[precision == "fp8" ? "peak_fp8_tflops" : "peak_bf16_tflops"].as<double>();
  const YAML::Node grid = gpu["gemm"][precision + "_grid_xla"];
  if (!grid) return t;
  for (const auto& row : grid["points"]) {
    if (!row.IsSequence() || row.size() < 4) bad(where + ": expected [m, n, k, tflops, ...]");
    t.shapes.push_back({row[0].as<double>(), row[1].as<double>(), row[2].as<double>(), row[3].as<double>() / peak});
  }
  return t;
}

// `donor`'s measured shapes, scaled from its plateau to `t`'s: the shape dependence `t` lacks.
void add_scaled_shapes(GemmTable& t, const GemmTable& donor) {
  for (auto s : donor.shapes) {
    s[3] *= t.plateau / donor.plateau;
    t.shapes.push_back(s);
  }
}

// A GPU measured only at its plateau takes the shape dependence of the nearest GPU (by 16-bit
// plateau) that has a grid, relative to that GPU's plateau.
void borrow_gemm_shapes(std::map<std::string, GpuCostData>& gpus) {
  for (auto& [key, d] : gpus) {
    for (GemmTable* t : {&d.gemm16, &d.gemm8}) {
      if (t->plateau <= 0 || !t->shapes.empty()) continue;
      const GemmTable* donor = nullptr;
      double gap = std::numeric_limits<double>::infinity();
      for (const auto& [other_key, o] : gpus) {
        const GemmTable& ot = t == &d.gemm16 ? o.gemm16 : o.gemm8;
        if (ot.shapes.empty()) continue;
        const double g = std::fabs(std::log(ot.plateau / t->plateau));
        if (g < gap) {
          gap = g;
          donor = &ot;
        }
      }
      if (donor != nullptr) add_scaled_shapes(*t, *donor);
    }
  }
}

IntraCollectiveData read_intra(const YAML::Node& n, const std::string& where) {
  if (!n) bad(where + " missing");
  IntraCollectiveData d;
  d.all_reduce = read_curve(n["all_reduce"], where + ".all_reduce");
  d.all_gather = read_curve(n["all_gather"], where + ".all_gather");
  d.reduce_scatter = read_curve(n["reduce_scatter"], where + ".reduce_scatter");
  d.p2p = read_curve(n["p2p"], where + ".p2p");
  if (d.all_reduce.empty() || d.all_gather.empty() || d.reduce_scatter.empty() || d.p2p.empty())
    bad(where + ": every collective needs a curve");
  return d;
}

struct Tables {
  std::map<std::string, GpuCostData> gpus;
  CollectiveCostData collectives;
  ElementwiseCostData elementwise;
  HostCostData host;
  double attention_in_step = 0;
  UnfusedAttentionData unfused_attention;
};

const Tables& tables() {
  static const Tables kTables = [] {
    Tables t;
    const YAML::Node kernels = YAML::Load(kernels_yaml())["gpus"];
    const YAML::Node root = YAML::Load(cost_tables_yaml());
    for (const auto& g : root["gpus"]) {
      GpuCostData d;
      d.key = g.first.as<std::string>();
      const YAML::Node n = g.second;
      const std::string w = "gpus." + d.key;
      d.sms = n["sms"].as<int>();
      d.hbm_efficiency = n["hbm_efficiency"].as<double>();
      d.nvls = n["nvls"] && n["nvls"].as<bool>();
      const std::string from = n["gemm_from"].as<std::string>();
      if (!kernels[from]) bad(w + ".gemm_from: no GPU '" + from + "' in kernels.yaml");
      d.gemm16 = read_gemm(kernels[from], "bf16", "kernels.yaml gpus." + from);
      d.gemm8 = read_gemm(kernels[from], "fp8", "kernels.yaml gpus." + from);
      // A GPU measured at its plateau only can name the one whose shape dependence it shares
      // (kernels.yaml gemm.shapes_from: the same die at another power limit), relative to the plateaus.
      if (const YAML::Node sf = kernels[from]["gemm"]["shapes_from"]) {
        const std::string donor = sf.as<std::string>();
        if (!kernels[donor]) bad("kernels.yaml gpus." + from + ".gemm.shapes_from: no GPU '" + donor + "'");
        for (auto [t, prec] : {std::pair{&d.gemm16, "bf16"}, std::pair{&d.gemm8, "fp8"}}) {
          const GemmTable dt = read_gemm(kernels[donor], prec, "kernels.yaml gpus." + donor);
          if (t->plateau > 0 && t->shapes.empty() && dt.plateau > 0) add_scaled_shapes(*t, dt);
        }
      }
      // attention_scale: a GPU with no attention measurement of its own takes another's curves
      // times a measured throughput ratio (the fraction is of this GPU's peak).
      const double attention_scale = n["attention_scale"] ? n["attention_scale"].as<double>() : 1.0;
      if (!(attention_scale > 0 && attention_scale <= 1)) bad(w + ".attention_scale must be in (0, 1]");
      d.default_attention = n["attention"]["default"].as<std::string>();
      for (const auto& k : n["attention"]) {
        const std::string name = k.first.as<std::string>();
        if (name == "default") continue;
        GpuCostData::Attention a{read_curve(k.second["fwd"], w + ".attention." + name + ".fwd"),
                          read_curve(k.second["bwd"], w + ".attention." + name + ".bwd")};
        for (Curve* c : {&a.fwd, &a.bwd})
          for (auto& p : c->points) p.second *= attention_scale;
        d.attention[name] = a;
      }
      const auto def = d.attention.find(d.default_attention);
      if (d.gemm16.plateau <= 0 || def == d.attention.end() || def->second.fwd.empty() || def->second.bwd.empty() ||
          d.hbm_efficiency <= 0)
        bad(w + ": bf16 GEMM, the default attention kernel's curves and HBM data are required");
      t.gpus[d.key] = d;
    }
    borrow_gemm_shapes(t.gpus);
    const YAML::Node c = root["collectives"];
    CollectiveCostData& cd = t.collectives;
    cd.base_latency_s = c["latency_us"]["base"].as<double>() * 1e-6;
    cd.nvlink_hop_s = c["latency_us"]["nvlink_hop"].as<double>() * 1e-6;
    cd.pcie_hop_s = c["latency_us"]["pcie_hop"].as<double>() * 1e-6;
    cd.net_hop_s = c["latency_us"]["net_hop"].as<double>() * 1e-6;
    cd.efa_net_hop_s = c["efa_net_hop_us"].as<double>() * 1e-6;
    if (!(cd.efa_net_hop_s > 0)) bad("collectives.efa_net_hop_us must be > 0");
    cd.tp_overlap_sms = c["tp_overlap_sms"].as<double>();
    cd.nvswitch_nvls = read_intra(c["intra"]["nvswitch_nvls"], "collectives.intra.nvswitch_nvls");
    cd.nvswitch = read_intra(c["intra"]["nvswitch"], "collectives.intra.nvswitch");
    cd.pcie = read_intra(c["intra"]["pcie"], "collectives.intra.pcie");
    cd.pcie_bridged_pairs = read_intra(c["intra"]["pcie_bridged_pairs"], "collectives.intra.pcie_bridged_pairs");
    cd.net_efficiency = read_curve(c["net_efficiency"], "collectives.net_efficiency");
    if (cd.net_efficiency.empty()) bad("collectives.net_efficiency missing");
    cd.all_to_all_nvlink = c["all_to_all"]["nvlink"].as<double>();
    cd.all_to_all_net = c["all_to_all"]["net"].as<double>();
    if (!(cd.all_to_all_nvlink > 0 && cd.all_to_all_nvlink <= 1 && cd.all_to_all_net > 0 && cd.all_to_all_net <= 1))
      bad("collectives.all_to_all.{nvlink,net} must be in (0, 1]");
    t.attention_in_step = root["attention_in_step"].as<double>();
    if (!(t.attention_in_step > 0 && t.attention_in_step <= 1.2)) bad("attention_in_step must be in (0, 1.2]");
    const YAML::Node ua = root["unfused_attention"];
    if (!ua) bad("unfused_attention missing");
    UnfusedAttentionData& u = t.unfused_attention;
    u.gpu = ua["measured_on"].as<std::string>();
    if (!hardware::find_gpu(u.gpu)) bad("unfused_attention.measured_on: no catalog GPU '" + u.gpu + "'");
    u.batch = ua["batch"].as<double>();
    u.heads = ua["heads"].as<double>();
    u.head_dim = ua["head_dim"].as<double>();
    if (!(u.batch >= 1 && u.heads >= 1 && u.head_dim >= 1)) bad("unfused_attention.{batch,heads,head_dim} must be >= 1");
    for (auto [key, out] : {std::pair{"fwd_ms", &u.fwd_s}, std::pair{"bwd_ms", &u.bwd_s}}) {
      const Curve ms = read_curve(ua[key], std::string("unfused_attention.") + key);
      if (ms.empty()) bad(std::string("unfused_attention.") + key + " is empty");
      for (const auto& [seq, v] : ms.points) {
        if (!(seq >= 1)) bad(std::string("unfused_attention.") + key + ": sequence lengths must be >= 1");  // times > 0: read_curve
        out->push_back({seq, v * 1e-3});
      }
    }
    const YAML::Node e = root["elementwise"];
    ElementwiseCostData& ew = t.elementwise;
    ew.rmsnorm_eager = e["rmsnorm_eager"].as<double>();
    ew.rope_eager = e["rope_eager"].as<double>();
    ew.rope_fused = e["rope_fused"].as<double>();
    ew.swiglu_eager = e["swiglu_eager"].as<double>();
    ew.attention_layout_eager = e["attention_layout_eager"].as<double>();
    if (!(ew.rmsnorm_eager > 0 && ew.rope_eager > 0 && ew.rope_fused > 0 && ew.swiglu_eager > 0 && ew.attention_layout_eager > 0))
      bad("elementwise.{rmsnorm_eager,rope_eager,rope_fused,swiglu_eager,attention_layout_eager} must be > 0");
    const YAML::Node h = root["host"];
    t.host.cpu_optimizer_Bps = h["cpu_optimizer_GBps"].as<double>() * 1e9;
    t.host.nvme_read_Bps = h["nvme_read_GBps"].as<double>() * 1e9;
    t.host.nvme_write_Bps = h["nvme_write_GBps"].as<double>() * 1e9;
    t.host.pcie_copy_efficiency = h["pcie_copy_efficiency"].as<double>();
    if (!(t.host.cpu_optimizer_Bps > 0 && t.host.nvme_read_Bps > 0 && t.host.nvme_write_Bps > 0))
      bad("host.{cpu_optimizer_GBps,nvme_read_GBps,nvme_write_GBps} must be > 0");
    if (!(t.host.pcie_copy_efficiency > 0 && t.host.pcie_copy_efficiency <= 1)) bad("host.pcie_copy_efficiency must be in (0, 1]");
    if (const YAML::Node links = h["link_copy_GBps"]) {  // optional
      if (!links.IsMap()) bad("host.link_copy_GBps must be a map of catalog GPU to GB/s");
      for (const auto& kv : links) {
        const std::string key = kv.first.as<std::string>();
        const auto gpu = hardware::find_gpu(key);
        if (!gpu || !(gpu->pcie_bandwidth_Bps > 0)) bad("host.link_copy_GBps: unknown GPU " + key);
        const double measured_Bps = kv.second.as<double>() * 1e9;
        if (!(measured_Bps > 0)) bad("host.link_copy_GBps." + key + " must be > 0");
        t.host.link_copy_scale[key] = measured_Bps / gpu->pcie_bandwidth_Bps;
      }
    }
    return t;
  }();
  return kTables;
}

}  // namespace

double Curve::at(double x) const {
  if (points.empty()) return 0;
  if (x <= points.front().first) return points.front().second;
  if (x >= points.back().first) return points.back().second;
  const auto hi = std::lower_bound(points.begin(), points.end(), std::make_pair(x, -std::numeric_limits<double>::infinity()));
  const auto lo = hi - 1;
  const double f = std::log(x / lo->first) / std::log(hi->first / lo->first);
  return lo->second + f * (hi->second - lo->second);
}

double GemmTable::efficiency(double m, double n, double k) const {
  if (shapes.empty()) return plateau;
  // Inside the measured grid: inverse squared distance over the nearest measured shapes in log2
  // space. Past the grid in some dimension: the grid edge's value, approaching the plateau by half
  // the remaining gap per doubling beyond the edge (the plateau is measured on such large shapes).
  double lo[3], hi[3];
  for (int i = 0; i < 3; ++i) {
    lo[i] = std::numeric_limits<double>::infinity();
    hi[i] = -lo[i];
  }
  for (const auto& s : shapes)
    for (int i = 0; i < 3; ++i) {
      lo[i] = std::min(lo[i], std::log2(s[static_cast<size_t>(i)]));
      hi[i] = std::max(hi[i], std::log2(s[static_cast<size_t>(i)]));
    }
  const double raw[3] = {std::log2(m), std::log2(n), std::log2(k)};
  double q[3], beyond = 0;
  for (int i = 0; i < 3; ++i) {
    q[i] = std::clamp(raw[i], lo[i], hi[i]);
    beyond += std::max(0.0, raw[i] - hi[i]);
  }
  constexpr size_t kNearest = 4;
  std::vector<std::pair<double, double>> near;  // (squared distance, efficiency)
  near.reserve(shapes.size());
  for (const auto& s : shapes) {
    double d2 = 0;
    for (int i = 0; i < 3; ++i) d2 += (q[i] - std::log2(s[static_cast<size_t>(i)])) * (q[i] - std::log2(s[static_cast<size_t>(i)]));
    near.emplace_back(d2, s[3]);
  }
  const size_t keep = std::min(kNearest, near.size());
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(keep), near.end());
  double e = 0;
  if (near[0].first < 1e-12) {
    e = near[0].second;
  } else {
    double wsum = 0, vsum = 0;
    for (size_t i = 0; i < keep; ++i) {
      wsum += 1 / near[i].first;
      vsum += near[i].second / near[i].first;
    }
    e = vsum / wsum;
  }
  e = std::min(e, plateau);
  return plateau - (plateau - e) * std::exp2(-beyond);
}

const GpuCostData& gpu_cost_data(const hardware::GpuSpec& gpu) {
  const auto& gpus = tables().gpus;
  if (auto it = gpus.find(gpu.catalog); it != gpus.end()) return it->second;
  if (auto it = gpus.find(gpu.name); it != gpus.end()) return it->second;
  const GpuCostData* best = nullptr;
  double best_gap = std::numeric_limits<double>::infinity();
  for (const auto& [key, data] : gpus) {
    const auto spec = hardware::find_gpu(key);
    if (!spec) continue;
    const double gap = std::fabs(std::log(spec->peak_bf16_flops / std::max(gpu.peak_bf16_flops, 1.0)));
    if (gap < best_gap) {
      best_gap = gap;
      best = &data;
    }
  }
  if (best == nullptr) bad("no GPU data");
  return *best;
}

const GpuCostData::Attention& GpuCostData::attention_kernel(const std::string& name) const {
  const auto it = attention.find(name);
  return it != attention.end() ? it->second : attention.at(default_attention);
}

const Curve& IntraCollectiveData::curve(int kind) const {
  switch (kind) {
    case 0: return all_reduce;
    case 1: return reduce_scatter;
    case 2: return all_gather;
    default: return p2p;
  }
}

const IntraCollectiveData& CollectiveCostData::intra(FabricKind f) const {
  switch (f) {
    case FabricKind::kNvswitchNvls: return nvswitch_nvls;
    case FabricKind::kNvswitch: return nvswitch;
    case FabricKind::kPcie: return pcie;
    case FabricKind::kPcieBridgedPairs: return pcie_bridged_pairs;
  }
  return nvswitch;
}

const CollectiveCostData& collective_cost_data() { return tables().collectives; }

const ElementwiseCostData& elementwise_cost_data() { return tables().elementwise; }

const HostCostData& host_cost_data() { return tables().host; }

double attention_in_step_fraction() { return tables().attention_in_step; }

const UnfusedAttentionData& unfused_attention_data() { return tables().unfused_attention; }

}  // namespace trainsim::model
