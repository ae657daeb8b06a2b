// An EventHandler that forwards to another one set later: for a handler built after the informer that feeds it
// (a reconcile controller whose sync reads the informer's store).
#pragma once

#include "informers/informer.h"

namespace liken::informers {

// Forwards every event to its target. Set the target before the informer starts; not thread-safe against
// set_target while events flow.
class ForwardingHandler final : public EventHandler {
 public:
  // `target` must outlive the informer's event delivery.
  void set_target(EventHandler* target) { target_ = target; }
  void OnAdd(const ObjectPtr& o) override { target_->OnAdd(o); }
  void OnUpdate(const ObjectPtr& a, const ObjectPtr& b) override { target_->OnUpdate(a, b); }
  void OnDelete(const ObjectPtr& o) override { target_->OnDelete(o); }

 private:
  EventHandler* target_ = nullptr;
};

}  // namespace liken::informers
