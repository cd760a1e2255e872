#include "agent/tools/timer_tool.h"

#include <algorithm>
#include <cmath>

#include "base/log.h"

namespace kazeia::agent {

using SteadyClock = std::chrono::steady_clock;

TimerService::TimerService(Callback on_fire) : TimerService(std::move(on_fire), TimerPersistence{}) {}

TimerService::TimerService(Callback on_fire, TimerPersistence persistence)
    : on_fire_(std::move(on_fire)), persistence_(std::move(persistence)), thread_([this] { run(); }) {}

Result<std::shared_ptr<TimerService>> TimerService::open(TimerPersistence persistence, Callback on_fire) {
  if (!persistence.store) return InvalidArgument("persistent timers need a timer store");
  if (!persistence.now_ms) persistence.now_ms = unix_now_ms;
  KZ_ASSIGN_OR_RETURN(std::vector<StoredTimer> saved, persistence.store->load());
  std::shared_ptr<TimerService> service(new TimerService(std::move(on_fire), std::move(persistence)));
  // Saved deadlines are wall-clock times: map them onto the steady clock.
  const int64_t wall_now = service->persistence_.now_ms();
  const auto steady_now = SteadyClock::now();
  std::vector<TimerEvent> missed;
  {
    std::lock_guard<std::mutex> lock(service->mu_);
    for (const StoredTimer& t : saved) {
      TimerInfo info{t.id, t.label, std::chrono::milliseconds(t.duration_ms),
                     steady_now + std::chrono::milliseconds(t.due_at_ms - wall_now)};
      if (t.due_at_ms > wall_now) {
        service->pending_.emplace(std::make_pair(info.due, info.id), info);
      } else {
        missed.push_back(TimerEvent{info.id, info.label, info.duration, info.due, steady_now, /*missed=*/true});
        service->events_.push_back(missed.back());
      }
    }
  }
  service->wake_.notify_all();
  service->fired_.notify_all();
  service->forget_saved(missed);
  if (service->on_fire_)
    for (const TimerEvent& event : missed) service->on_fire_(event);
  return service;
}

TimerService::~TimerService() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

Result<TimerInfo> TimerService::create(std::chrono::nanoseconds duration, std::string label) {
  if (duration.count() <= 0) return InvalidArgument("timer duration must be positive");
  TimerInfo info;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.size() >= kMaxPending) {
      return OutOfRange("too many pending timers (limit " + std::to_string(kMaxPending) + ")");
    }
    KZ_ASSIGN_OR_RETURN(info.id, save(label, duration));
    info.label = std::move(label);
    info.duration = duration;
    info.due = SteadyClock::now() + duration;
    pending_.emplace(std::make_pair(info.due, info.id), info);
  }
  wake_.notify_all();  // the new timer may be the earliest
  return info;
}

std::vector<TimerInfo> TimerService::list() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TimerInfo> out;
  out.reserve(pending_.size());
  for (const auto& [key, info] : pending_) out.push_back(info);
  return out;
}

Status TimerService::cancel(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->second.id == id) {
      if (persistence_.store) {
        Status removed = persistence_.store->remove(id);
        if (!removed.ok() && removed.code() != ErrorCode::kNotFound) {
          return removed.with_context("timer " + std::to_string(id) + " not cancelled");
        }
      }
      pending_.erase(it);
      return OkStatus();  // no need to wake the thread: it re-checks on wake-up
    }
  }
  return NotFound("no pending timer with id " + std::to_string(id));
}

Result<int64_t> TimerService::save(const std::string& label, std::chrono::nanoseconds duration) {
  if (!persistence_.store) return next_id_++;
  const int64_t now = persistence_.now_ms();
  const int64_t ms = std::chrono::ceil<std::chrono::milliseconds>(duration).count();  // never earlier
  Result<int64_t> id = persistence_.store->add(label, ms, now, now + ms);
  if (!id.ok()) return id.status().with_context("timer not saved");
  return id;
}

void TimerService::forget_saved(const std::vector<TimerEvent>& fired) {
  if (!persistence_.store) return;
  for (const TimerEvent& event : fired) {
    Status removed = persistence_.store->remove(event.id);
    if (!removed.ok() && removed.code() != ErrorCode::kNotFound) {
      KZ_LOG_WARN("timer %lld fired but stays saved (it will fire again on restart): %s",
                  static_cast<long long>(event.id), removed.to_string().c_str());
    }
  }
}

std::vector<TimerEvent> TimerService::poll() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TimerEvent> out(events_.begin(), events_.end());
  events_.clear();
  return out;
}

std::optional<TimerEvent> TimerService::wait_event(std::chrono::nanoseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!fired_.wait_for(lock, timeout, [this] { return !events_.empty(); })) return std::nullopt;
  TimerEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

void TimerService::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (pending_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const auto earliest = pending_.begin()->first.first;
    if (SteadyClock::now() < earliest) {
      wake_.wait_until(lock, earliest);
      continue;  // re-examine: a timer may have been added or cancelled
    }
    // Everything due fires now, in (deadline, id) order: the map's order.
    std::vector<TimerEvent> batch;
    const auto now = SteadyClock::now();
    while (!pending_.empty() && pending_.begin()->first.first <= now) {
      const TimerInfo& info = pending_.begin()->second;
      batch.push_back(TimerEvent{info.id, info.label, info.duration, info.due, now});
      pending_.erase(pending_.begin());
    }
    for (const TimerEvent& event : batch) events_.push_back(event);
    fired_.notify_all();
    if (on_fire_ || persistence_.store) {
      lock.unlock();  // the callback may call create/list/cancel/poll; the store does I/O
      forget_saved(batch);
      if (on_fire_)
        for (const TimerEvent& event : batch) on_fire_(event);
      lock.lock();
    }
  }
}

namespace {

double to_seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// Seconds rounded to milliseconds, for the model.
double rounded_seconds(std::chrono::nanoseconds d) { return std::round(to_seconds(d) * 1000.0) / 1000.0; }

}  // namespace

Tool make_timer_tool(std::shared_ptr<TimerService> service) {
  Tool tool;
  tool.name = "timer";
  tool.description =
      "Manage countdown timers. action=create starts a timer (give seconds and/or minutes, and "
      "an optional label); action=list shows pending timers; action=cancel stops the timer with "
      "the given id. You are notified when a timer fires.";
  tool.parameters = json::parse(R"({
    "type": "object",
    "properties": {
      "action": {"type": "string", "enum": ["create", "list", "cancel"]},
      "seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": 604800},
      "minutes": {"type": "number", "exclusiveMinimum": 0, "maximum": 10080},
      "label": {"type": "string", "maxLength": 200},
      "id": {"type": "integer", "minimum": 1}
    },
    "required": ["action"],
    "additionalProperties": false
  })");
  tool.timeout = std::chrono::milliseconds(2000);
  tool.handler = [service](const json& args, const ToolContext&) -> Result<json> {
    const std::string action = args.at("action").get<std::string>();
    const auto now = SteadyClock::now();
    if (action == "create") {
      if (!args.contains("seconds") && !args.contains("minutes")) {
        return InvalidArgument("action 'create' needs 'seconds' or 'minutes'");
      }
      double seconds = args.value("seconds", 0.0) + 60.0 * args.value("minutes", 0.0);
      if (seconds > 7 * 24 * 3600.0) return InvalidArgument("timer duration exceeds 7 days");
      auto duration = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
      KZ_ASSIGN_OR_RETURN(TimerInfo info, service->create(duration, args.value("label", std::string())));
      return json{{"id", info.id}, {"label", info.label}, {"fires_in_seconds", rounded_seconds(info.duration)}};
    }
    if (action == "list") {
      json timers = json::array();
      for (const TimerInfo& info : service->list()) {
        timers.push_back(json{{"id", info.id},
                              {"label", info.label},
                              {"remaining_seconds", rounded_seconds(std::max(info.due - now, SteadyClock::duration::zero()))}});
      }
      return json{{"timers", timers}};
    }
    // cancel
    if (!args.contains("id")) return InvalidArgument("action 'cancel' needs 'id'");
    const int64_t id = args.at("id").get<int64_t>();
    KZ_RETURN_IF_ERROR(service->cancel(id));
    return json{{"cancelled", id}};
  };
  return tool;
}

}  // namespace kazeia::agent
