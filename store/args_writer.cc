#include "store/args_writer.h"

#include "format/keys.h"
#include "store/thread_name.h"

namespace tracetable {

ArgsWriter::ArgsWriter(std::unique_ptr<RunWriter> out) : out_(std::move(out)) {
  thread_ = std::thread([this] { Run(); });
}

ArgsWriter::~ArgsWriter() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = abandon_ = true;
  }
  work_.notify_one();
  thread_.join();
}

absl::Status ArgsWriter::Add(uint64_t id, std::string_view json) {
  const uint64_t number = id >> kArgsBlockShift;
  if (gathering_ && number != block_.number) {
    if (absl::Status s = HandOver(); !s.ok()) return s;
  }
  if (!gathering_) {
    block_.number = number;
    gathering_ = true;
  }
  block_.texts.append(json.data(), json.size());
  block_.entries.emplace_back(static_cast<uint32_t>(id - (number << kArgsBlockShift)),
                              block_.texts.size());
  return absl::OkStatus();
}

absl::Status ArgsWriter::HandOver() {
  std::unique_lock<std::mutex> lock(mu_);
  auto room = [&] {
    return queue_.empty() || (queue_.size() < kMaxQueued && queued_bytes_ < kMaxQueuedBytes) || !status_.ok();
  };
  if (!room()) {
    work_.notify_one();  // it may sleep on fewer than kWakeBlocks
    done_.wait(lock, room);
  }
  if (!status_.ok()) return status_;
  queued_bytes_ += block_.texts.size();
  queue_.push_back(std::move(block_));
  block_ = Block{};
  if (!spare_.empty()) {
    block_ = std::move(spare_.back());
    spare_.pop_back();
  }
  gathering_ = false;
  if (queue_.size() >= kWakeBlocks || queued_bytes_ >= kWakeBytes) work_.notify_one();
  return absl::OkStatus();
}

absl::Status ArgsWriter::Close() {
  if (!thread_.joinable()) return status_;
  if (gathering_) {
    if (absl::Status s = HandOver(); !s.ok()) return s;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  work_.notify_one();
  thread_.join();
  if (!status_.ok()) return status_;
  return out_->Close();
}

void ArgsWriter::Run() {
  NameThisThread("tt-args");
  for (;;) {
    Block block;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (abandon_ || queue_.empty()) return;
      block = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= block.texts.size();
    }
    absl::Status s = Write(block);
    block.texts.clear();
    block.entries.clear();
    std::lock_guard<std::mutex> lock(mu_);
    if (!s.ok() && status_.ok()) status_ = s;
    if (spare_.size() < kMaxSpares && block.texts.capacity() <= kMaxSpareBytes) spare_.push_back(std::move(block));
    done_.notify_one();
    if (!status_.ok()) return;
  }
}

absl::Status ArgsWriter::Write(const Block& block) {
  size_t begin = 0;
  for (const auto& [slot, end] : block.entries) {
    encoder_.Add(slot, std::string_view(block.texts).substr(begin, end - begin));
    begin = end;
  }
  return out_->Put(ArgsBlockKey(block.number), encoder_.Finish());
}

}  // namespace tracetable
