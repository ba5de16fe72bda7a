#include "cli/mpi_batch.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "util/error.hpp"
#include "util/output.hpp"

#ifdef TRAINSIM_HAVE_MPI
// The C API only (the deprecated C++ bindings would need their own library).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <dlfcn.h>
#include <mpi.h>
#endif

namespace trainsim::cli {
namespace {

int env_count(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return (*end == '\0' && n > 0 && n < (1 << 24)) ? static_cast<int>(n) : 0;
}

#ifdef TRAINSIM_HAVE_MPI
constexpr int kResultTag = 7;

// The MPI functions trainsim calls, from the MPI library loaded at run time. libsimgrid exports
// MPI_* too (SimGrid's SMPI): linked normally, its definitions would win, so the library is opened
// with deep binding (its own symbols first) and called only through these pointers.
struct MpiApi {
  decltype(&MPI_Init) init = nullptr;
  decltype(&MPI_Initialized) initialized = nullptr;
  decltype(&MPI_Finalize) finalize = nullptr;
  decltype(&MPI_Finalized) finalized = nullptr;
  decltype(&MPI_Comm_rank) comm_rank = nullptr;
  decltype(&MPI_Comm_size) comm_size = nullptr;
  decltype(&MPI_Barrier) barrier = nullptr;
  decltype(&MPI_Isend) isend = nullptr;
  decltype(&MPI_Waitall) waitall = nullptr;
  decltype(&MPI_Probe) probe = nullptr;
  decltype(&MPI_Iprobe) iprobe = nullptr;
  decltype(&MPI_Get_count) get_count = nullptr;
  decltype(&MPI_Recv) recv = nullptr;
  MPI_Comm world{};
  MPI_Datatype chars{};
};

const MpiApi& mpi() {
  static const MpiApi api = [] {
    MpiApi a;
    void* lib = nullptr;
    std::string tried;
    for (const char* name : {TRAINSIM_MPI_LIBRARY, "libmpi.so.40", "libmpi.so.12", "libmpi.so"}) {
      lib = ::dlopen(name, RTLD_NOW | RTLD_GLOBAL);
      if (lib != nullptr) break;
      tried += std::string(tried.empty() ? "" : ", ") + name;
    }
    if (lib == nullptr) throw std::runtime_error("launched by an MPI launcher but cannot load the MPI library (tried " + tried + ")");
    auto get = [&](auto& fn, const char* name) {
      void* sym = ::dlsym(lib, name);
      if (sym == nullptr) throw std::runtime_error(std::string("the MPI library has no ") + name);
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
    };
    get(a.init, "MPI_Init");
    get(a.initialized, "MPI_Initialized");
    get(a.finalize, "MPI_Finalize");
    get(a.finalized, "MPI_Finalized");
    get(a.comm_rank, "MPI_Comm_rank");
    get(a.comm_size, "MPI_Comm_size");
    get(a.barrier, "MPI_Barrier");
    get(a.isend, "MPI_Isend");
    get(a.waitall, "MPI_Waitall");
    get(a.probe, "MPI_Probe");
    get(a.iprobe, "MPI_Iprobe");
    get(a.get_count, "MPI_Get_count");
    get(a.recv, "MPI_Recv");
#ifdef OPEN_MPI
    // Open MPI's handles are addresses of objects in the library.
    void* world = nullptr;
    void* chars = nullptr;
    get(world, "ompi_mpi_comm_world");
    get(chars, "ompi_mpi_char");
    a.world = static_cast<MPI_Comm>(world);
    a.chars = static_cast<MPI_Datatype>(chars);
#else
    a.world = MPI_COMM_WORLD;  // MPICH: integer constants
    a.chars = MPI_CHAR;
#endif
    return a;
  }();
  return api;
}

void finalize_mpi() {
  int finalized = 0;
  mpi().finalized(&finalized);
  if (!finalized) mpi().finalize();
}

// One job's result as sent to rank 0: {"index", "ran", "exit_code", "error", "result", "rank", "stopped"}.
std::string encode(size_t index, const JobResult& r, int rank) {
  nlohmann::json j = {{"index", index}, {"ran", r.ran},         {"exit_code", r.exit_code}, {"error", r.error},
                      {"result", r.result}, {"rank", rank}, {"stopped", r.stopped}};
  return j.dump();
}

JobResult decode(const std::string& text, size_t& index) {
  const auto j = nlohmann::json::parse(text);
  index = j.at("index").get<size_t>();
  JobResult r;
  r.ran = j.at("ran").get<bool>();
  r.exit_code = j.at("exit_code").get<int>();
  r.error = j.at("error").get<std::string>();
  r.result = j.at("result");
  r.rank = j.at("rank").get<int>();
  r.stopped = j.at("stopped").get<bool>();
  return r;
}
#endif

}  // namespace

int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const int n = env_count(name); n > 0) return n;
  return 1;
}

BatchWorld batch_world() {
  static const BatchWorld world = [] {
    BatchWorld w;
    if (launcher_world_size() <= 1) return w;
#ifdef TRAINSIM_HAVE_MPI
    int initialized = 0;
    mpi().initialized(&initialized);
    if (!initialized) {
      mpi().init(nullptr, nullptr);
      std::atexit(finalize_mpi);
    }
    mpi().comm_rank(mpi().world, &w.rank);
    mpi().comm_size(mpi().world, &w.size);
#else
    std::fprintf(stderr, "trainsim: launched as %d ranks but built without MPI: every rank runs the whole batch\n",
                 launcher_world_size());
#endif
    return w;
  }();
  return world;
}

std::vector<JobResult> run_batch(const std::string& self, const std::vector<Job>& jobs, int64_t parallel,
                                 const std::string& scenario_text,
                                 const std::function<void(size_t, const JobResult&)>& on_done) {
  const BatchWorld world = batch_world();
  if (world.size <= 1) return run_jobs(self, jobs, parallel, scenario_text, on_done);
#ifdef TRAINSIM_HAVE_MPI
  // Every rank has read its inputs (the --resume file among them) before rank 0 appends to them.
  mpi().barrier(mpi().world);
  if (parallel <= 0) parallel = 1;
  std::vector<Job> mine;
  std::vector<size_t> index;  // mine[k] is jobs[index[k]]
  for (size_t i = 0; i < jobs.size(); ++i)
    if (static_cast<int>(i % static_cast<size_t>(world.size)) == world.rank) {
      mine.push_back(jobs[i]);
      index.push_back(i);
    }

  if (world.rank != 0) {
    // Results leave as they finish; the buffers stay put until MPI_Waitall (reserve: no reallocation).
    std::vector<std::string> sent;
    std::vector<MPI_Request> requests;
    sent.reserve(mine.size());
    requests.reserve(mine.size());
    auto send = [&](size_t k, const JobResult& r) {
      sent.push_back(encode(index[k], r, world.rank));
      requests.emplace_back();
      mpi().isend(sent.back().data(), static_cast<int>(sent.back().size()), mpi().chars, 0, kResultTag, mpi().world,
                  &requests.back());
    };
    const auto results = run_jobs(self, mine, parallel, scenario_text, [&](size_t k, const JobResult& r) {
      if (!r.ran)
        std::fprintf(stderr, "trainsim: rank %d: job %zu failed: %s\n", world.rank, index[k], r.error.c_str());
      send(k, r);
    });
    // Stopped by a signal (mpirun forwards SIGINT and SIGTERM to every rank): rank 0 still waits for
    // one message per job, so the jobs not finished go to it as stopped.
    for (size_t k = 0; k < results.size(); ++k)
      if (results[k].stopped) send(k, results[k]);
    mpi().waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    return {};
  }

  std::vector<JobResult> all(jobs.size());
  const size_t remote = jobs.size() - mine.size();
  size_t received = 0;
  auto receive = [&](bool block) {
    while (received < remote) {
      MPI_Status status;
      int ready = 1;
      if (block)
        mpi().probe(MPI_ANY_SOURCE, kResultTag, mpi().world, &status);
      else
        mpi().iprobe(MPI_ANY_SOURCE, kResultTag, mpi().world, &ready, &status);
      if (!ready) return;
      int n = 0;
      mpi().get_count(&status, mpi().chars, &n);
      std::string text(static_cast<size_t>(n), '\0');
      mpi().recv(text.data(), n, mpi().chars, status.MPI_SOURCE, kResultTag, mpi().world, MPI_STATUS_IGNORE);
      size_t i = 0;
      JobResult r = decode(text, i);
      ++received;
      if (i >= all.size()) continue;
      all[i] = std::move(r);
      if (on_done && !all[i].stopped) on_done(i, all[i]);
    }
  };
  const auto local = run_jobs(self, mine, parallel, scenario_text, [&](size_t k, const JobResult& r) {
    all[index[k]] = r;
    if (on_done) on_done(index[k], r);
    receive(false);
  });
  for (size_t k = 0; k < local.size(); ++k)
    if (local[k].stopped) all[index[k]] = local[k];
  // Stopped or not, every other rank sends a message per job (its stopped ones too): waiting for
  // them all lets every rank finish cleanly. A rank that was not signalled finishes its share first.
  receive(true);
  return all;
#else
  return run_jobs(self, jobs, parallel, scenario_text, on_done);
#endif
}

void require_scenario_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw util::InputError("--emit-slurm: the array's tasks read the scenario themselves, so it must be a regular file; " + path +
                           " is not (save it to a file first)");
}

std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string slurm_script(const SlurmBatch& b, const std::string& script_path, const std::string& results_dir) {
  auto words = [](const std::vector<std::string>& args) {
    std::string s;
    for (const auto& a : args) s += " " + shell_quote(a);
    return s;
  };
  const size_t last = b.jobs.empty() ? 0 : b.jobs.size() - 1;
  std::ostringstream o;
  o << "#!/bin/bash\n"
    << "# trainsim " << b.command << " as a Slurm job array (written by trainsim --emit-slurm): one task per job.\n"
    << "#   jobid=$(sbatch --parsable " << script_path << ")\n"
    << "#   sbatch --dependency=afterany:$jobid --array=0 " << script_path << " merge\n"
    << "# or, once the array is done: bash " << script_path << " merge\n"
    << "# The merge step writes the same report as the one-machine `trainsim " << b.command << "` (stdout, --json, --csv):\n"
    << "# it reads the tasks' result files and simulates, in its own job, any task whose result is missing.\n"
    << "#SBATCH --job-name=trainsim-" << b.command << "\n"
    << "#SBATCH --array=0-" << last << "\n"
    << "#SBATCH --ntasks=1\n"
    << "#SBATCH --cpus-per-task=1\n"
    << "#SBATCH --output=" << results_dir << "/slurm-%A_%a.out\n"
    << "set -euo pipefail\n"
    << "cd " << shell_quote(b.workdir) << "\n"
    << "TRAINSIM=" << shell_quote(b.self) << "\n"
    << "RESULTS=" << shell_quote(results_dir) << "\n"
    << "mkdir -p \"$RESULTS\"\n"
    << "if [ \"${1:-}\" = merge ]; then\n"
    << "  [ \"${SLURM_ARRAY_TASK_ID:-0}\" = 0 ] || exit 0\n"
    << "  shopt -s nullglob\n"
    << "  files=(\"$RESULTS\"/[0-9]*.json)\n"
    << "  cat /dev/null \"${files[@]}\" > \"$RESULTS/all.jsonl\"\n"
    << "  exec \"$TRAINSIM\"" << words(b.merge_args) << " --resume \"$RESULTS/all.jsonl\"\n"
    << "fi\n"
    << "case \"${SLURM_ARRAY_TASK_ID:?run with sbatch, or: bash " << script_path << " merge}\" in\n";
  for (size_t i = 0; i < b.jobs.size(); ++i) o << "  " << i << ") args=(" << words(b.jobs[i].args).substr(1) << ") ;;\n";
  o << "  *) echo \"no job $SLURM_ARRAY_TASK_ID in this batch (0-" << last << ")\" >&2; exit 2 ;;\n"
    << "esac\n"
    << "exec \"$TRAINSIM\" worker \"${args[@]}\" --out \"$RESULTS/$SLURM_ARRAY_TASK_ID.json\"\n";
  return o.str();
}

std::string write_slurm_script(const SlurmBatch& batch, const std::string& script_path) {
  if (batch.jobs.empty()) throw util::InputError("--emit-slurm: this batch has nothing to simulate");
  namespace fs = std::filesystem;
  fs::path script = fs::absolute(script_path);
  fs::path results = script;
  results.replace_extension();
  results += "-results";
  fs::create_directories(results);
  util::write_output(script.string(), slurm_script(batch, script.string(), results.string()));
  ::chmod(script.c_str(), 0755);
  return results.string();
}

}  // namespace trainsim::cli
