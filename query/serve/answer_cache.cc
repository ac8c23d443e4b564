#include "query/serve/answer_cache.h"

namespace tracetable::serve {

std::shared_ptr<const std::string> AnswerCache::Find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->body;
}

void AnswerCache::Put(const std::string& key, std::string body) {
  if (body.empty() || body.size() > max_answer_bytes()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (index_.contains(key)) return;
  while (!lru_.empty() && bytes_ + body.size() > capacity_) {
    bytes_ -= lru_.back().body->size();
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
  Entry e{key, nullptr, nullptr};
  // Never waits: room in the budget is for answers in flight first.
  if (budget_->Reserve(body.size(), &e.hold) != AnswerBudget::Verdict::kOk) return;
  bytes_ += body.size();
  e.body = std::make_shared<const std::string>(std::move(body));
  lru_.push_front(std::move(e));
  index_[key] = lru_.begin();
}

std::shared_ptr<void> AnswerCache::Lead(const std::string& key, std::function<void()> done) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = flights_.find(key);
  if (it != flights_.end()) {
    it->second.push_back(std::move(done));
    return nullptr;
  }
  flights_[key];
  // Non-null (a shared_ptr to null tests false), owning nothing.
  return std::shared_ptr<void>(static_cast<void*>(this), [this, key](void*) {
    std::vector<std::function<void()>> waiters;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto f = flights_.find(key);
      waiters = std::move(f->second);
      flights_.erase(f);
    }
    for (auto& w : waiters) w();
  });
}

}  // namespace tracetable::serve
