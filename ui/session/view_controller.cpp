#include "session/view_controller.h"

#include <utility>

namespace dpx::ui {

ViewController::ViewController(Freshness freshness, std::function<void()> start, QObject* parent)
    : QObject(parent), m_freshness(freshness), m_start(std::move(start)), m_job(freshness == Freshness::kNewestOnly) {
  m_debounce.setSingleShot(true);
  connect(&m_debounce, &QTimer::timeout, this, [this] { m_start(); });
  connect(&m_job, &BackgroundJob::progressed, this, &ViewController::progressed);
}

ViewController::~ViewController() { m_job.cancel(); }

void ViewController::schedule(int debounceMs) {
  if (debounceMs <= 0) {
    m_debounce.stop();
    m_start();
    return;
  }
  m_debounce.start(debounceMs);
}

void ViewController::run(BackgroundJob::Work work, BackgroundJob::Done apply) {
  const std::uint64_t generation = ++m_requested;
  m_job.request(std::move(work), [this, generation, apply = std::move(apply)](std::any&& result) {
    if (generation <= m_cancelled || generation < m_applied) return;  // gone, or older than the screen
    if (m_freshness == Freshness::kNewestOnly && generation != m_requested) return;
    m_applied = generation;
    apply(std::move(result));
  });
}

void ViewController::cancel() {
  m_debounce.stop();
  m_job.cancel();
  m_cancelled = m_requested;  // whatever is still on its way is for a request that is gone
}

}  // namespace dpx::ui
