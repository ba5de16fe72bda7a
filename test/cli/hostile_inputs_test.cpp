// Issue 21's hostile-input suite: at least 150 cases across the categories of the campaign that
// found the holes (bad values under every kind of key, bad flags, bad files, bad platform files),
// each run as a user would run it. Every case must exit as documented (2 and a message naming the
// key or flag where it is wrong), leave an existing output file untouched, and leave no process and
// no temporary file behind (each case runs with a private TMPDIR that must end empty, and no
// trainsim process may still name it).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"

namespace {

namespace fs = std::filesystem;
using trainsim::testing::shell;

struct Case {
  std::string args;  // after the binary; {tiny} is the tiny scenario, {dir} the case's directory
  int code;
  std::string says;  // a part of standard error
};

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

std::string quote(const std::string& s) { return "'" + replace_all(s, "'", "'\\''") + "'"; }

std::vector<Case> cases() {
  std::vector<Case> all;
  const std::string run = "run {tiny} --steps 2 --advice 0 --quiet --json {dir}/keep.json";
  // 1. Counts: every one of these is a positive integer (or a non-negative one), never these.
  for (const char* key : {"model.layers", "model.hidden", "model.heads", "model.vocab", "model.seq_len", "cluster.nodes",
                          "cluster.gpus_per_node", "parallelism.tp", "parallelism.pp", "parallelism.dp", "parallelism.cp",
                          "parallelism.micro_batch", "training.global_batch", "training.steps", "cluster.inter_node.nics_per_node"})
    for (const char* v : {"-1", "nan", "abc", "1.5", "[1]", "{a: 1}", "1e400", "''"})
      all.push_back({run + " --set " + quote(std::string(key) + "=" + v), 2, std::string("--set:1:")});
  // 2. Quantities with units.
  for (const char* key : {"cluster.intra_node.bandwidth", "cluster.inter_node.nic_bandwidth", "cluster.intra_node.latency",
                          "cluster.inter_node.latency"})
    for (const char* v : {"-1GBps", "abc", "nanGBps", "infGBps", "0x10GBps", "10", "[1]", "1e400GBps"})
      all.push_back({run + " --set " + quote(std::string(key) + "=" + v), 2, std::string(key)});
  // 3. Choices.
  for (const char* kv : {"cluster.gpu=h100-sxmm", "cluster.intra_node.fabric=nvlinkk", "cluster.inter_node.topology=ring",
                         "parallelism.schedule=2f2b", "parallelism.recompute=some", "training.precision=fp4x",
                         "training.optimizer=lion2", "model.ffn=relu", "parallelism.zero=4", "parallelism.zero=-1",
                         "model.preset=llama3-406b", "version=2"})
    all.push_back({run + " --set " + quote(kv), 2, "--set:1:"});
  // 4. Keys that do not exist, and malformed --set arguments.
  for (const char* kv : {"model.layer=24", "modl.layers=24", "cluster.nodez=2", "parallelism.tpp=2", "training.stepz=2",
                         "=24", "model.layers", "model..layers=2", ".model=1", "model.layers.x=1"})
    all.push_back({run + " --set " + quote(kv), 2, "--set"});
  // 5. Layouts that cannot be: the message points at the key (the --set's, or the scenario's own
  // line when the product of several keys is what is wrong).
  for (const char* kv : {"parallelism.tp=3", "parallelism.tp=16", "parallelism.pp=5", "parallelism.dp=3",
                         "training.global_batch=7", "parallelism.micro_batch=3", "model.heads=15", "parallelism.cp=3"})
    all.push_back({run + " --set " + quote(kv), 2, ":"});
  // 6. Flags.
  for (const std::string& flags :
       {std::string("run {tiny} --steps 0"), std::string("run {tiny} --steps -3"), std::string("run {tiny} --steps abc"),
        std::string("run {tiny} --seed -1"), std::string("run {tiny} --fidelity exact"), std::string("run {tiny} --advice 99"),
        std::string("run {tiny} --trace-steps 0"), std::string("run {tiny} --json ''"), std::string("run {tiny} --csv ''"),
        std::string("run {tiny} --bogus"), std::string("run"), std::string("frobnicate {tiny}"),
        std::string("sweep {tiny} --nodes 0"), std::string("sweep {tiny} --nodes abc"), std::string("sweep {tiny}"),
        std::string("sweep {tiny} --nodes 1,2 --threshold nan"), std::string("sweep {tiny} --nodes 1,2 --threshold 2"),
        std::string("sweep {tiny} --nodes 1,2 --jobs -5"), std::string("sweep {tiny} --nodes 1,2 --jobs 0"),
        std::string("sweep {tiny} --nodes 1,2 --scaling sideways"), std::string("sweep {tiny} --nodes 1,2 --runs 0"),
        std::string("sweep {tiny} --nodes 1,2 --resume ''"), std::string("variance {tiny}"),
        std::string("variance {tiny} --runs 0"), std::string("variance {tiny} --runs 2 --jobs -1"),
        std::string("variance {tiny} --runs 2 --seed -1"), std::string("plan {tiny} --objective speed"),
        std::string("plan {tiny} --top 0"), std::string("plan {tiny} --threshold nan"), std::string("memory {tiny} --json ''")})
    all.push_back({flags + " --quiet", 2, ""});
  // 7. Files that are not scenarios.
  all.push_back({"run {dir}/missing.yaml --quiet", 2, "missing.yaml: cannot read file"});
  all.push_back({"run {dir} --quiet", 2, "cannot read file"});
  all.push_back({"run /dev/zero --quiet", 2, "/dev/zero: larger than 16 MiB"});
  all.push_back({"run {dir}/empty.yaml --quiet", 2, "empty.yaml"});
  all.push_back({"run {dir}/list.yaml --quiet", 2, "list.yaml"});
  all.push_back({"run {dir}/tab.yaml --quiet", 2, "tab.yaml:4:1: tab in the indentation"});
  all.push_back({"run {dir}/nul.yaml --quiet", 2, "nul.yaml:2:8: NUL byte"});
  all.push_back({"run {dir}/deep.yaml --quiet", 2, "nested more than 64 deep"});
  all.push_back({"run {dir}/utf8.yaml --quiet", 2, "name must be UTF-8 text"});
  all.push_back({"run {dir}/ctrl.yaml --quiet", 2, "name must not contain control characters"});
  all.push_back({"run {dir}/twodocs.yaml --quiet", 2, "expected one YAML document"});
  all.push_back({"run {dir}/alias.yaml --quiet", 2, "alias.yaml"});
  // 8. Outputs that cannot be written (checked before simulating).
  for (const std::string& out : {std::string("--json {dir}"), std::string("--json {dir}/no/such/x.json"),
                                 std::string("--csv {tiny}"), std::string("--json {dir}/a --csv {dir}/a"),
                                 std::string("--trace {dir}/no/t.json")})
    all.push_back({"run {tiny} --steps 2 --advice 0 --quiet " + out, 2, ""});
  // 9. Platform files.
  all.push_back({"run {dir}/fifo-platform.yaml --quiet", 2, "not a regular file"});
  all.push_back({"run {dir}/zero-bw-platform.yaml --quiet", 2, "has bandwidth 0 B/s"});
  return all;
}

void write_fixtures(const fs::path& dir) {
  const std::string rest = "model: {preset: llama2-7b, layers: 2}\ncluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n"
                           "parallelism: {tp: 8}\ntraining: {global_batch: 8}\n";
  auto put = [&](const char* name, const std::string& text) { std::ofstream(dir / name, std::ios::binary) << text; };
  put("empty.yaml", "");
  put("list.yaml", "- 1\n- 2\n");
  put("tab.yaml", "version: 1\nname: t\nmodel:\n\tpreset: llama2-7b\n");
  put("nul.yaml", std::string("version: 1\nname: t\0x\n", 20));
  put("deep.yaml", "version: 1\nname: d\nmodel: " + std::string(500, '[') + std::string(500, ']') + "\n");
  put("utf8.yaml", "version: 1\nname: \"a\xff" "b\"\n" + rest);
  put("ctrl.yaml", "version: 1\nname: \"a\\x07b\"\n" + rest);
  put("twodocs.yaml", "version: 1\nname: a\n" + rest + "---\nversion: 1\n");
  put("alias.yaml", "version: 1\nname: &a [*a]\n" + rest);
  put("keep.json", "{\"old\": true}\n");
  ::mkfifo((dir / "fifo").c_str(), 0600);
  put("fifo-platform.yaml", "version: 1\nname: f\nmodel: {preset: llama2-7b, layers: 2}\n"
                            "cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8, platform: fifo}\n"
                            "parallelism: {tp: 8}\ntraining: {global_batch: 8}\n");
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/platforms/h100-ib-4node.xml");
  std::stringstream xml;
  xml << in.rdbuf();
  put("zero-bw.xml", replace_all(xml.str(), "id=\"nic-0-0\" bandwidth=\"400Gbps\"", "id=\"nic-0-0\" bandwidth=\"0Bps\""));
  put("zero-bw-platform.yaml", "version: 1\nname: z\nmodel: {preset: llama2-7b, layers: 4}\n"
                               "cluster: {gpu: h100-sxm, nodes: 4, gpus_per_node: 8, platform: zero-bw.xml}\n"
                               "parallelism: {tp: 8, dp: 4}\ntraining: {global_batch: 8}\n");
}

TEST(HostileInputs, EveryCaseExitsAsDocumentedAndLeavesNothingBehind) {
  const auto all = cases();
  ASSERT_GE(all.size(), 150u);
  std::string tmpl = (fs::temp_directory_path() / "trainsim-hostile-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  const fs::path tmp = dir / "tmp";
  fs::create_directories(tmp);
  write_fixtures(dir);
  const std::string tiny = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/tiny-gpt-2node.yaml";
  int failed = 0;
  for (const auto& c : all) {
    const std::string args = replace_all(replace_all(c.args, "{tiny}", tiny), "{dir}", dir.string());
    SCOPED_TRACE(args);
    const auto r = shell("cd " + dir.string() + " && TMPDIR=" + tmp.string() + " timeout 60 " + std::string(TRAINSIM_BINARY) + " " + args);
    const bool ok = r.code == c.code && r.err.find(c.says) != std::string::npos && r.err.find("internal error") == std::string::npos;
    EXPECT_TRUE(ok) << "exit " << r.code << " (expected " << c.code << "), stderr: " << r.err.substr(0, 400);
    failed += ok ? 0 : 1;
    EXPECT_TRUE(fs::is_empty(tmp)) << "temporary files left in TMPDIR";
    std::ifstream keep(dir / "keep.json");
    std::string kept((std::istreambuf_iterator<char>(keep)), std::istreambuf_iterator<char>());
    EXPECT_EQ(kept, "{\"old\": true}\n") << "an existing output was damaged";
  }
  EXPECT_TRUE(trainsim::testing::processes_mentioning(dir.string()).empty());
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
  }
  std::printf("  %zu hostile cases, %d not as documented\n", all.size(), failed);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
