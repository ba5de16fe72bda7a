// Issue 16: `tools/plot.py report` writes every picture and one self-contained HTML page; headless
// Chromium (installed by tools/setup) opens the page and every embedded picture decodes.
#include "cli_test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using trainsim::testing::Result;
using trainsim::testing::scenario;
using trainsim::testing::shell;
using trainsim::testing::tmp;

TEST(ReportHtmlTest, ChromiumRendersEveryPicture) {
  ASSERT_TRUE(fs::exists("/usr/bin/chromium")) << "headless Chromium is needed: tools/setup installs the chromium package";
  const fs::path dir = fs::path(tmp("report")) / "nested";  // -o creates the folders
  fs::remove_all(dir.parent_path());
  const std::string plot = std::string(TRAINSIM_SOURCE_DIR) + "/tools/plot.py";
  const Result r = shell(plot + " report " + scenario("tiny-gpt-2node.yaml") + " -o " + dir.string() +
                         " --trainsim " + TRAINSIM_BINARY + " --steps 4 --sweep 1,2,4 --variance 3");
  ASSERT_EQ(r.code, 0) << r.err;
  int pngs = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".png") ++pngs;
  // run: breakdown, stages, stretch, steps; memory; sweep; variance: days, best-worst.
  EXPECT_EQ(pngs, 8);
  const fs::path page = dir / "report.html";
  ASSERT_TRUE(fs::exists(page));
  std::ifstream in(page);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string html = ss.str();
  // Self-contained: the pictures are data URIs, no file or network reference.
  int srcs = 0, embedded = 0;
  for (size_t at = html.find("src=\""); at != std::string::npos; at = html.find("src=\"", at + 1)) {
    ++srcs;
    if (html.compare(at + 5, 22, "data:image/png;base64,") == 0) ++embedded;
  }
  EXPECT_EQ(srcs, pngs);
  EXPECT_EQ(embedded, srcs);
  EXPECT_NE(html.find("bottleneck:"), std::string::npos);     // the console summary
  EXPECT_NE(html.find("name: tiny-gpt-2node"), std::string::npos);  // the scenario
  const Result dom = shell("timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=5000 "
                           "--dump-dom file://" + page.string());
  ASSERT_EQ(dom.code, 0) << dom.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom.out, m, std::regex("data-rendered=\"(\\d+)/(\\d+)\""))) << dom.out.substr(0, 500);
  EXPECT_EQ(m[1].str(), m[2].str());
  EXPECT_EQ(std::stoi(m[2].str()), pngs);
  fs::remove_all(dir.parent_path());
}

}  // namespace
