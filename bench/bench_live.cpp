// Timed harness for live utility, offscreen: the explorer on the Training tab with the embedded
// digits loaded (n bound to the data) and "live" on; each sample changes σ through the model and
// measures the time until the first epoch of the restarted run reaches the GUI thread — the
// debounce (kLiveDebounceMs), cancelling the running training, calibrating each mechanism to the
// table's ε, and one epoch of DP-SGLD, DP-SGD and SGD side by side. Prints p50/p95.
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTabWidget>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "bench_util.h"
#include "main_window.h"
#include "trainer_panel.h"

using dpx::bench::percentile;

namespace {

bool waitFor(const std::function<bool()>& done, int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  while (!done()) {
    if (timer.elapsed() > timeoutMs) return false;
    QApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  dpx::ui::MainWindow window;
  window.resize(1600, 1000);
  window.show();
  window.tabs()->setCurrentIndex(dpx::ui::MainWindow::kTrainingTab);
  dpx::ui::TrainerPanel* trainer = window.trainerPanel();
  if (!waitFor([&] { return window.model()->params().n == 1438; }, 20000)) {
    std::fprintf(stderr, "the digits did not load\n");
    return 1;
  }
  trainer->liveBox()->setChecked(true);
  waitFor([&] { return !trainer->controller()->running(); }, 20000);
  dpx::ui::TrainingController* controller = trainer->controller();
  std::vector<double> latency;
  std::vector<double> wholeRun;
  for (int i = 0; i < 30; ++i) {
    const double sigma = 0.8 + 0.05 * (i % 20);
    QSignalSpy epochs(controller, &dpx::ui::TrainingController::epochDone);
    QSignalSpy restarted(trainer, &dpx::ui::TrainerPanel::liveRestarted);
    QSignalSpy runStarted(controller, &dpx::ui::TrainingController::runStarted);
    double restartMs = -1, runStartedMs = -1;
    QElapsedTimer timer;
    timer.start();
    window.model()->setKnob(dpx::core::Knob::kSigma, sigma);
    if (!waitFor(
            [&] {
              if (restartMs < 0 && !restarted.isEmpty()) restartMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
              if (runStartedMs < 0 && !runStarted.isEmpty())
                runStartedMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
              return !epochs.isEmpty();
            },
            20000)) {
      std::fprintf(stderr, "no epoch after change %d\n", i);
      return 1;
    }
    latency.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
    if (qEnvironmentVariableIsSet("DPX_BENCH_TRACE")) {
      std::printf("restart %.0f ms, run started %.0f ms, first epoch %.0f ms\n", restartMs, runStartedMs,
                  latency.back());
    }
    waitFor([&] { return !controller->running(); }, 60000);
    wholeRun.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
  }
  const dpx::core::Params& p = window.model()->params();
  std::printf(
      "live on digits (n = %lld, m = %lld, %.4g epochs, 3 mechanisms): change → first new epoch on the GUI "
      "thread p50 %.0f ms, p95 %.0f ms (debounce %d ms); change → run finished p50 %.0f ms\n",
      static_cast<long long>(p.n), static_cast<long long>(p.m), dpx::core::nominalEpochs(p), percentile(latency, 0.5),
      percentile(latency, 0.95), dpx::ui::kLiveDebounceMs, percentile(wholeRun, 0.5));
  std::printf("measured training rate: %.3g parameter·examples/s\n", controller->measuredRate());
  return 0;
}
