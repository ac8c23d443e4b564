#include "query/serve/answer_budget.h"

namespace tracetable::serve {

AnswerBudget::Verdict AnswerBudget::Change(uint64_t from, uint64_t to) {
  std::lock_guard<std::mutex> lock(mu_);
  if (to > limit_) return Verdict::kTooLarge;
  const uint64_t others = used_ - from;
  if (to > from && others + to > limit_) return Verdict::kBusy;
  used_ = others + to;
  return Verdict::kOk;
}

AnswerBudget::Verdict AnswerBudget::Reserve(uint64_t bytes, std::unique_ptr<Reservation>* out) {
  const Verdict v = Change(0, bytes);
  if (v == Verdict::kOk) *out = std::make_unique<Reservation>(this, bytes);
  return v;
}

uint64_t AnswerBudget::in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

AnswerBudget::Reservation::~Reservation() { budget_->Change(bytes_, 0); }

AnswerBudget::Verdict AnswerBudget::Reservation::Resize(uint64_t bytes) {
  const Verdict v = budget_->Change(bytes_, bytes);
  if (v == Verdict::kOk) bytes_ = bytes;
  return v;
}

}  // namespace tracetable::serve
