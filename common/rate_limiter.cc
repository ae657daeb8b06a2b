#include "common/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace liken {
namespace {

class ExponentialRateLimiter final : public RateLimiter {
 public:
  ExponentialRateLimiter(absl::Duration base, absl::Duration max) : base_(base), max_(max) {}

  absl::Duration When(const std::string& key) override {
    absl::MutexLock lock(&mu_);
    int exp = failures_[key]++;
    if (exp > 62) return max_;
    double factor = std::ldexp(1.0, exp);
    double seconds = absl::ToDoubleSeconds(base_) * factor;
    if (seconds >= absl::ToDoubleSeconds(max_)) return max_;
    return absl::Seconds(seconds);
  }

  void Forget(const std::string& key) override {
    absl::MutexLock lock(&mu_);
    failures_.erase(key);
  }

  int NumRequeues(const std::string& key) override {
    absl::MutexLock lock(&mu_);
    auto it = failures_.find(key);
    return it == failures_.end() ? 0 : it->second;
  }

 private:
  const absl::Duration base_;
  const absl::Duration max_;
  absl::Mutex mu_;
  std::map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);
};

class MaxOfRateLimiter final : public RateLimiter {
 public:
  MaxOfRateLimiter(std::unique_ptr<RateLimiter> per_key, std::unique_ptr<TokenBucket> bucket)
      : per_key_(std::move(per_key)), bucket_(std::move(bucket)) {}

  absl::Duration When(const std::string& key) override {
    return std::max(per_key_->When(key), bucket_->Reserve());
  }
  void Forget(const std::string& key) override { per_key_->Forget(key); }
  int NumRequeues(const std::string& key) override { return per_key_->NumRequeues(key); }

 private:
  std::unique_ptr<RateLimiter> per_key_;
  std::unique_ptr<TokenBucket> bucket_;
};

}  // namespace

std::unique_ptr<RateLimiter> NewExponentialRateLimiter(absl::Duration base, absl::Duration max) {
  return std::make_unique<ExponentialRateLimiter>(base, max);
}

std::unique_ptr<RateLimiter> NewControllerRateLimiter(Clock* clock, absl::Duration base, absl::Duration max,
                                                      double qps, int burst) {
  return std::make_unique<MaxOfRateLimiter>(NewExponentialRateLimiter(base, max),
                                            std::make_unique<TokenBucket>(clock, qps, burst));
}

TokenBucket::TokenBucket(Clock* clock, double qps, int burst)
    : clock_(clock), qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)), last_(clock->Now()) {}

void TokenBucket::RefillLocked() {
  absl::Time now = clock_->Now();
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * qps_);
    last_ = now;
  }
}

absl::Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return absl::ZeroDuration();
  absl::MutexLock lock(&mu_);
  RefillLocked();
  tokens_ -= 1.0;
  if (tokens_ >= 0) return absl::ZeroDuration();
  return absl::Seconds(-tokens_ / qps_);
}

bool TokenBucket::TryTake() {
  if (qps_ <= 0) return true;
  absl::MutexLock lock(&mu_);
  RefillLocked();
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

}  // namespace liken
