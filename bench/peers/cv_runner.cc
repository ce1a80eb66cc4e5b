// OpenCV DNN's peer runner (Debian's libopencv-dnn-dev 4.6): readNetFromONNX, the OpenCV backend
// on the CPU target, cv::setNumThreads(--threads). OpenCV 4.6 cannot read kiln's opset-17,
// dynamic-batch exports, so run.py feeds it the static-batch copies cv_export.py writes. When
// OpenCV cannot load or run a model the runner prints a JSON line with "error" (the reason) and
// exits 3, so the run goes on and the report can say why. Protocol and output: runner_common.h.

#include <cstdio>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/dnn.hpp>
#include <string>
#include <vector>

#include "runner_common.h"

namespace {

[[noreturn]] void fail(const peers::Args& a, const std::string& stage, const std::string& why) {
  // OpenCV's messages span lines ("... in function 'handleNode'\n> Node [Expand] ..."): keep all.
  std::string first_line = why;
  for (char& c : first_line) {
    if (c == '\n') c = ' ';
  }
  if (first_line.size() > 400) first_line.resize(400);
  std::printf(
      "{\"engine\": \"opencv\", \"model\": \"%s\", \"batch\": %d, \"threads\": %d, \"version\": "
      "\"opencv %s\", \"error\": \"%s: %s\"}\n",
      peers::json_escape(a.model).c_str(), a.batch, a.threads, CV_VERSION, stage.c_str(),
      peers::json_escape(first_line).c_str());
  std::fflush(stdout);
  std::exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  const peers::Args args = peers::parse_args(argc, argv);
  const peers::Npy input = peers::tile_batch(peers::read_npy(args.input), args.batch);
  if (input.dtype != "float32") fail(args, "input", "OpenCV DNN takes float32 inputs only");
  cv::setNumThreads(args.threads);

  cv::dnn::Net net;
  try {
    net = cv::dnn::readNetFromONNX(args.onnx);
  } catch (const cv::Exception& e) {
    fail(args, "load", e.what());
  }
  if (net.empty()) fail(args, "load", "readNetFromONNX returned an empty net");
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);

  std::vector<int> dims(input.shape.begin(), input.shape.end());
  cv::Mat blob(static_cast<int>(dims.size()), dims.data(), CV_32F,
               const_cast<char*>(input.bytes.data()));
  cv::Mat out;
  try {
    net.setInput(blob);
    out = net.forward();  // the first run also allocates and initialises the layers
  } catch (const cv::Exception& e) {
    fail(args, "forward", e.what());
  }
  const peers::Timing t = peers::time_runs(args, [&] {
    net.setInput(blob);
    out = net.forward();
  });
  const std::string check = out.type() == CV_32F && out.isContinuous()
                                ? peers::check_output(args, out.ptr<float>())
                                : std::string();
  peers::print_result("opencv", args, t,
                      std::string("opencv ") + CV_VERSION + " (DNN_BACKEND_OPENCV, CPU)", check);
  return 0;
}
