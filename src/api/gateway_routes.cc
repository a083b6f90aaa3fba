// The inference gateway: OpenAI's API at /openai/v1/, each request routed by its `model` to the
// endpoint of that name in the token's project (docs/endpoints.md, "The gateway").
//
// A request goes to the less loaded of two replicas in rotation that have room (a built-in
// engine's replica takes its max_batch at once), or to the replica its prompt's prefix maps to
// while that one is not much busier. With no replica that has room it waits in the endpoint's
// queue (up to max_queue; 429 beyond) until one does or queue_timeout passes (503): an endpoint
// scaled to zero starts a replica for it meanwhile, so the first request is slow, not lost. The
// answer streams through as it comes (SSE event by event). A replica that fails before it
// answered (its connection refused or dropped, or a 503: stopping, or still loading) has the
// request sent on to another, or back to the queue to wait for one, never after: so a replica
// that drains or dies between the routing and the request costs its clients time, not errors. The
// client's token stays here: replicas see neither it nor any other credential.
#include "api/gateway_routes.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <map>
#include <random>

#include "api/errors.h"
#include "api/json_body.h"
#include "endpoints/balancer.h"
#include "endpoints/completion_tokens.h"
#include "endpoints/gateway_metrics.h"
#include "http/upstream.h"

namespace tf::api {
namespace {

using endpoints::EndpointLabels;
using endpoints::GatewayMetrics;
using endpoints::LoadBoard;
using endpoints::RecentRequests;
using endpoints::Route;
using endpoints::RouteReplica;
using endpoints::RoutingTable;

// Tries of a request whose replica fails before answering (a refused or dropped connection, or
// a 503 from a replica that is stopping or still loading): each goes to another replica, or
// waits in the queue for one.
constexpr int kMaxTries = 10;
constexpr auto kRetryAfter = std::chrono::seconds(1);  // a failed replica is passed over this long
constexpr size_t kPrefixBytes = 256;
// A waiting request is woken when one at its endpoint ends or the rotation changes here; it
// also looks again this often, for what changes elsewhere (another server's controller, a
// replica passed over after a failure becoming eligible again).
constexpr auto kQueueRecheck = std::chrono::milliseconds(200);
constexpr auto kUpstreamStepTimeout = std::chrono::minutes(10);
// A completion's whole answer may take this long, its wait in the queue included (bounded by the
// endpoint's queue_timeout, at most an hour), instead of the server's usual handler timeout:
// a long generation that is not streamed is answered, not cut at a minute.
constexpr auto kCompletionTimeout = std::chrono::hours(2);
using SteadyClock = std::chrono::steady_clock;

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// OpenAI's error shape: {"error": {"message", "type", "param", "code"}}.
http::Response OpenAiError(int status, const std::string& message, const std::string& type,
                           const std::string& code, const std::string& param = "") {
  Json error = {{"message", message},
                {"type", type},
                {"param", param.empty() ? Json(nullptr) : Json(param)},
                {"code", code.empty() ? Json(nullptr) : Json(code)}};
  return JsonResponse(status, {{"error", std::move(error)}});
}

uint64_t RandomDraw() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

// A hash of what the prompt starts with (the prompt, or the first message's content), for
// prefix affinity; nothing when the request has neither.
std::optional<uint64_t> PrefixOf(const Json& body) {
  auto prompt = body.find("prompt");
  if (prompt != body.end() && prompt->is_string()) {
    return endpoints::PrefixHash(prompt->get_ref<const std::string&>(), kPrefixBytes);
  }
  auto messages = body.find("messages");
  if (messages != body.end() && messages->is_array() && !messages->empty()) {
    const Json& first = (*messages)[0];
    auto content = first.find("content");
    if (content != first.end() && content->is_string()) {
      return endpoints::PrefixHash(content->get_ref<const std::string&>(), kPrefixBytes);
    }
  }
  return std::nullopt;
}

// The replicas a request was sent to and failed at before any answer, and when: each is passed
// over for kRetryAfter, then may be tried again (a refused connection can be a moment's).
class Tried {
 public:
  void Failed(const std::string& replica_id) { at_[replica_id] = SteadyClock::now(); }
  bool Excludes(const std::string& replica_id) const {
    auto it = at_.find(replica_id);
    return it != at_.end() && SteadyClock::now() - it->second < kRetryAfter;
  }

 private:
  std::map<std::string, SteadyClock::time_point> at_;
};

// The replica in rotation, with room and not just failed, that the balancer picks.
std::optional<RouteReplica> Choose(const Route& route, LoadBoard& load,
                                   std::optional<uint64_t> prefix, const Tried& tried) {
  std::vector<endpoints::Candidate> candidates;
  std::vector<const RouteReplica*> replicas;
  for (const RouteReplica& r : route.ready) {
    if (tried.Excludes(r.id)) continue;
    int outstanding = load.InFlightOf(route.endpoint_id, r.id);
    if (outstanding >= route.replica_concurrency) continue;
    candidates.push_back({r.id, outstanding});
    replicas.push_back(&r);
  }
  auto pick = endpoints::PickReplica(candidates, RandomDraw(), prefix);
  if (!pick) return std::nullopt;
  return *replicas[*pick];
}

// A request counted in flight at a replica for as long as this lives.
class InFlightMark {
 public:
  InFlightMark(LoadBoard& load, QueueWakeups& wakeups, std::string endpoint_id,
               std::string replica_id)
      : load_(load),
        wakeups_(wakeups),
        endpoint_id_(std::move(endpoint_id)),
        replica_id_(std::move(replica_id)) {
    load_.InFlight(endpoint_id_, replica_id_, +1);
  }
  // The replica has room for one more: a request waiting in the queue may take it.
  ~InFlightMark() {
    load_.InFlight(endpoint_id_, replica_id_, -1);
    wakeups_.Notify(endpoint_id_);
  }
  InFlightMark(const InFlightMark&) = delete;
  InFlightMark& operator=(const InFlightMark&) = delete;

 private:
  LoadBoard& load_;
  QueueWakeups& wakeups_;
  std::string endpoint_id_, replica_id_;
};

// What the gateway counts of one request, from its arrival to its last byte: the Prometheus
// metrics, and the recent figures `endpoint describe` shows.
class Tally {
 public:
  Tally(GatewayMetrics& metrics, RecentRequests& recent, const Clock& clock, EndpointLabels labels)
      : metrics_(metrics), recent_(recent), clock_(clock), labels_(std::move(labels)) {}

  void FirstByte() {
    first_byte_ = SecondsSince(started_);
    metrics_.ObserveFirstByte(labels_, *first_byte_);
  }
  // Once, when the last byte has gone (or the request was refused).
  void End(int status, int64_t completion_tokens) {
    double seconds = SecondsSince(started_);
    if (!first_byte_) FirstByte();  // an answer sent whole
    metrics_.ObserveRequest(labels_, status, seconds);
    if (completion_tokens > 0) metrics_.AddCompletionTokens(labels_, completion_tokens);
    recent_.Add(labels_.endpoint_id,
                {clock_.Now(), status, seconds, *first_byte_, completion_tokens});
  }

 private:
  GatewayMetrics& metrics_;
  RecentRequests& recent_;
  const Clock& clock_;
  const EndpointLabels labels_;
  const SteadyClock::time_point started_ = SteadyClock::now();
  std::optional<double> first_byte_;
};

// What a streamed answer keeps until its stream ends.
struct Exchange {
  std::unique_ptr<http::UpstreamReply> reply;
  std::unique_ptr<InFlightMark> in_flight;
  std::shared_ptr<Tally> tally;
  int status = 0;
};

// Passes the upstream body on piece by piece as it comes. A client that goes away drops the
// upstream connection, which ends the replica's work on it; an upstream that fails mid-way
// ends the client's response there.
awaitable<void> RelayBody(std::shared_ptr<Exchange> x, http::StreamWriter& out) {
  endpoints::StreamTokenCounter tokens;
  for (;;) {
    Result<std::string> piece = co_await x->reply->Next();
    if (!piece.ok() || piece->empty()) break;
    tokens.Feed(*piece);
    if (!co_await out.Write(std::move(*piece))) break;
  }
  x->reply.reset();  // back to the pool if read to the end, else closed
  x->in_flight.reset();
  x->tally->End(x->status, tokens.tokens());
}

class Gateway {
 public:
  Gateway(Services& s, RoutingTable& routes, LoadBoard& load, QueueWakeups& wakeups,
          GatewayMetrics& metrics, RecentRequests& recent,
          std::shared_ptr<http::UpstreamPool> upstreams, std::function<void()> wake_controller)
      : s_(s),
        routes_(routes),
        load_(load),
        wakeups_(wakeups),
        metrics_(metrics),
        recent_(recent),
        upstreams_(std::move(upstreams)),
        wake_controller_(std::move(wake_controller)) {}

  awaitable<http::Response> Complete(Context& ctx, std::string upstream_path) {
    auto parsed = ParseJsonObject(ctx.request.body);
    if (!parsed.ok()) {
      co_return OpenAiError(400, parsed.status().message(), "invalid_request_error", "");
    }
    const Json& body = *parsed;
    auto model = body.find("model");
    if (model == body.end() || !model->is_string() ||
        model->get_ref<const std::string&>().empty()) {
      co_return OpenAiError(400, "you must provide a model parameter: the endpoint's name",
                            "invalid_request_error", "", "model");
    }
    const std::string& name = model->get_ref<const std::string&>();
    const bool stream = body.value("stream", false) == true;
    std::optional<uint64_t> prefix = PrefixOf(body);

    auto route = co_await Find(ctx.principal.project_id, name);
    if (!route.ok()) co_return ErrorResponse(route.status());
    if (!route->has_value() || (*route)->deleting) {
      co_return OpenAiError(404,
                            "The model '" + name +
                                "' does not exist: no endpoint of that name in project '" +
                                ctx.principal.project_name + "' (tensorfleet endpoint ls)",
                            "invalid_request_error", "model_not_found", "model");
    }
    Route r = **route;
    auto tally = std::make_shared<Tally>(metrics_, recent_, s_.clock,
                                         EndpointLabels{r.project_id, r.name, r.endpoint_id});
    // Counted here: answers that are not streamed, and refusals; a stream when it ends.
    auto done = [&](http::Response response) {
      int64_t tokens = response.status == 200 ? endpoints::CompletionTokensOf(response.body) : 0;
      tally->End(response.status, tokens);
      return response;
    };
    load_.Arrived(r.endpoint_id);

    // The first replica with room, else a wait in the queue for one; then tries until one
    // answers, each failure before an answer sending the request on (see kMaxTries).
    Tried tried;
    for (int attempt = 1;; ++attempt) {
      std::optional<RouteReplica> replica = Choose(r, load_, prefix, tried);
      if (!replica) {
        if (attempt == 1 && load_.QueuedOf(r.endpoint_id) >= r.max_queue) {
          http::Response full =
              OpenAiError(429,
                          "endpoint '" + name + "' has " + std::to_string(r.max_queue) +
                              " requests waiting already (its max_queue): retry shortly",
                          "requests", "rate_limit_exceeded");
          full.headers.emplace_back("Retry-After", "1");
          co_return done(std::move(full));
        }
        load_.Queued(r.endpoint_id, +1);
        if (wake_controller_) wake_controller_();  // scale now, from zero or out
        replica = co_await Wait(ctx.principal.project_id, name, r, prefix, tried);
        load_.Queued(r.endpoint_id, -1);
        if (!replica) {
          co_return done(
              OpenAiError(503,
                          "no replica of endpoint '" + name + "' could take the request within " +
                              std::to_string(r.queue_timeout_ms / 1000) +
                              " s (its queue_timeout); see tensorfleet endpoint describe " + name,
                          "server_error", "service_unavailable"));
        }
      }
      // (No co_await inside ?: here: g++ 12 mishandles the temporaries of such an expression.)
      Attempt sent;
      if (stream) {
        sent = co_await Streamed(r, *replica, upstream_path, ctx.request.body, tally);
      } else {
        sent = co_await Whole(r, *replica, upstream_path, ctx.request.body);
      }
      if (sent.response) {
        if (sent.response->stream) co_return std::move(*sent.response);  // counted at its end
        co_return done(std::move(*sent.response));
      }
      tried.Failed(replica->id);
      if (attempt == kMaxTries) {
        co_return done(OpenAiError(502,
                                   "endpoint '" + name + "': its replicas failed " +
                                       std::to_string(kMaxTries) +
                                       " tries; the last: " + sent.failure.message(),
                                   "server_error", "upstream_error"));
      }
    }
  }

  awaitable<http::Response> Models(Context& ctx) {
    auto views = co_await RunBlocking(
        s_.pool, [&] { return s_.store.endpoints().ListEndpoints(ctx.principal.project_id); });
    if (!views.ok()) co_return ErrorResponse(views.status());
    Json data = Json::array();
    for (const store::EndpointRecord& e : *views) {
      if (e.state == "deleting") continue;
      data.push_back({{"id", e.name},
                      {"object", "model"},
                      {"created", e.created_at / 1000},
                      {"owned_by", ctx.principal.project_name}});
    }
    co_return JsonResponse(200, {{"object", "list"}, {"data", std::move(data)}});
  }

 private:
  // The endpoint as the routing table has it, read again from the store when stale.
  awaitable<Result<std::optional<Route>>> Find(const std::string& project,
                                               const std::string& name) {
    if (!routes_.Fresh()) {
      Status refreshed = co_await RunBlocking(s_.pool, [this] { return routes_.Refresh(); });
      if (!refreshed.ok()) co_return refreshed;
    }
    co_return routes_.Lookup(project, name);
  }

  // Waits in the endpoint's queue until a replica has room, or its queue_timeout passes.
  awaitable<std::optional<RouteReplica>> Wait(const std::string& project, const std::string& name,
                                              Route& r, std::optional<uint64_t> prefix,
                                              const Tried& tried) {
    const auto deadline = SteadyClock::now() + std::chrono::milliseconds(r.queue_timeout_ms);
    for (auto now = SteadyClock::now(); now < deadline; now = SteadyClock::now()) {
      const uint64_t seen = wakeups_.Count(r.endpoint_id);
      auto route = co_await Find(project, name);
      if (route.ok() && route->has_value() && !(*route)->deleting) {
        r = **route;
        if (auto replica = Choose(r, load_, prefix, tried)) co_return replica;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      co_await wakeups_.Wait(r.endpoint_id, seen, std::min(left, kQueueRecheck));
    }
    co_return std::nullopt;
  }

  // What one try at a replica came to: the answer for the client (an upstream error included),
  // or a failure before any answer, which may be tried elsewhere.
  struct Attempt {
    std::optional<http::Response> response;
    Status failure;
  };

  static Attempt Failure(Status status) { return {std::nullopt, std::move(status)}; }

  static Status RefusedWith(const http::ClientResponse& answer) {
    return Unavailable("the replica answered 503: " + answer.body.substr(0, 200));
  }

  // The request to a replica: the client's token stays here; the replica's own key goes.
  static http::UpstreamRequest UpstreamCall(const RouteReplica& replica, const std::string& path,
                                            const std::string& body, bool stream) {
    http::UpstreamRequest request;
    request.target = path;
    request.headers = {{"Content-Type", "application/json"}};
    if (!replica.key.empty())
      request.headers.emplace_back("Authorization", "Bearer " + replica.key);
    if (stream) request.headers.emplace_back("Accept", "text/event-stream");
    request.body = body;
    request.step_timeout = kUpstreamStepTimeout;
    return request;
  }

  // A failure to reach the replica may be tried elsewhere; any other ends the request.
  Attempt Failed(const Route& r, const Status& status) {
    if (status.code() == StatusCode::kUnavailable) return Failure(status);
    return Attempt{OpenAiError(502,
                               "endpoint '" + r.name + "': its replica failed: " + status.message(),
                               "server_error", "upstream_error")};
  }

  static http::Response Answer(http::ClientResponse&& answer, const char* default_type) {
    http::Response out;
    out.status = answer.status;
    const std::string& type = answer.Header("Content-Type");
    out.content_type = type.empty() ? default_type : type;
    out.body = std::move(answer.body);
    return out;
  }

  // A non-streamed request: the whole answer.
  awaitable<Attempt> Whole(const Route& r, const RouteReplica& replica, const std::string& path,
                           const std::string& body) {
    InFlightMark in_flight(load_, wakeups_, r.endpoint_id, replica.id);
    auto answer =
        co_await upstreams_->Send(replica.address, UpstreamCall(replica, path, body, false));
    if (!answer.ok()) co_return Failed(r, answer.status());
    if (answer->status == 503) co_return Failure(RefusedWith(*answer));
    co_return Attempt{Answer(std::move(*answer), "application/json")};
  }

  // A streamed request: the head once it comes, then the body as it comes (RelayBody).
  awaitable<Attempt> Streamed(const Route& r, const RouteReplica& replica, const std::string& path,
                              const std::string& body, std::shared_ptr<Tally> tally) {
    auto x = std::make_shared<Exchange>();
    x->in_flight = std::make_unique<InFlightMark>(load_, wakeups_, r.endpoint_id, replica.id);
    auto reply =
        co_await upstreams_->Open(replica.address, UpstreamCall(replica, path, body, true));
    if (!reply.ok()) co_return Failed(r, reply.status());
    x->reply = std::move(reply).value();
    const http::ClientResponse& head = x->reply->head();
    if (head.status / 100 != 2) {  // an error: whole, and small
      auto answer = co_await x->reply->ReadAll();
      if (!answer.ok()) co_return Failed(r, answer.status());
      if (answer->status == 503) co_return Failure(RefusedWith(*answer));
      co_return Attempt{Answer(std::move(*answer), "application/json")};
    }
    tally->FirstByte();
    x->tally = std::move(tally);
    x->status = head.status;
    http::Response out;
    out.status = head.status;
    const std::string& type = head.Header("Content-Type");
    out.content_type = type.empty() ? "text/event-stream" : type;
    out.stream = [x](http::StreamWriter& w) -> awaitable<void> { co_await RelayBody(x, w); };
    co_return Attempt{std::move(out)};
  }

  Services& s_;
  RoutingTable& routes_;
  LoadBoard& load_;
  QueueWakeups& wakeups_;
  GatewayMetrics& metrics_;
  RecentRequests& recent_;
  std::shared_ptr<http::UpstreamPool> upstreams_;
  std::function<void()> wake_controller_;
};

}  // namespace

void AddGatewayRoutes(Router& router, Services& services, RoutingTable& routes, LoadBoard& load,
                      QueueWakeups& wakeups, GatewayMetrics& metrics, RecentRequests& recent,
                      std::shared_ptr<http::UpstreamPool> upstreams,
                      std::function<void()> wake_controller) {
  auto gateway = std::make_shared<Gateway>(services, routes, load, wakeups, metrics, recent,
                                           std::move(upstreams), std::move(wake_controller));
  router.Add("POST", "/openai/v1/chat/completions",
             [gateway](Context& ctx) -> awaitable<http::Response> {
               co_return co_await gateway->Complete(ctx, "/v1/chat/completions");
             });
  router.Add("POST", "/openai/v1/completions",
             [gateway](Context& ctx) -> awaitable<http::Response> {
               co_return co_await gateway->Complete(ctx, "/v1/completions");
             });
  router.Add("GET", "/openai/v1/models", [gateway](Context& ctx) -> awaitable<http::Response> {
    co_return co_await gateway->Models(ctx);
  });
  for (const char* path : {"/openai/v1/chat/completions", "/openai/v1/completions"}) {
    router.SetHandlerTimeout("POST", path, kCompletionTimeout);
  }
}

}  // namespace tf::api
