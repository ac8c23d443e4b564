#include "query/serve/answer_budget.h"

namespace tracetable::serve {

AnswerBudget::Verdict AnswerBudget::Change(uint64_t from, uint64_t to,
                                           std::chrono::steady_clock::time_point until) {
  std::unique_lock<std::mutex> lock(mu_);
  if (to > limit_) return Verdict::kTooLarge;
  const auto fits = [&] { return to <= from || used_ - from + to <= limit_; };
  if (!fits() && !freed_.wait_until(lock, until, fits)) return Verdict::kBusy;
  used_ = used_ - from + to;
  if (to < from) {
    lock.unlock();
    freed_.notify_all();
  }
  return Verdict::kOk;
}

AnswerBudget::Verdict AnswerBudget::Reserve(uint64_t bytes, std::unique_ptr<Reservation>* out,
                                            std::chrono::steady_clock::time_point until) {
  const Verdict v = Change(0, bytes, until);
  if (v == Verdict::kOk) *out = std::make_unique<Reservation>(this, bytes);
  return v;
}

uint64_t AnswerBudget::in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

AnswerBudget::Reservation::~Reservation() { budget_->Change(bytes_, 0, {}); }

AnswerBudget::Verdict AnswerBudget::Reservation::Resize(uint64_t bytes,
                                                        std::chrono::steady_clock::time_point until) {
  const Verdict v = budget_->Change(bytes_, bytes, until);
  if (v == Verdict::kOk) bytes_ = bytes;
  return v;
}

}  // namespace tracetable::serve
