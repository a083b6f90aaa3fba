#include "api/app.h"

#include <atomic>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <condition_variable>
#include <fstream>
#include <thread>
#include <vector>

#include "api/budget_routes.h"
#include "api/dataset_routes.h"
#include "api/endpoint_routes.h"
#include "api/gateway_routes.h"
#include "api/pool_routes.h"
#include "api/router.h"
#include "api/s3/addressing.h"
#include "api/services.h"
#include "api/sweep_routes.h"
#include "base/log.h"
#include "base/mutex.h"
#include "cost/budgets/budget_loop.h"
#include "cost/metering/metering_service.h"
#include "endpoints/endpoint_controller.h"
#include "endpoints/replica_jobs.h"
#include "endpoints/shared_load.h"
#include "endpoints/shared_traffic.h"
#include "objects/s3_blob_store.h"
#include "pools/pool_controller.h"
#include "pools/pool_service.h"
#include "sweeps/job_trial_runner.h"
#include "sweeps/sweep_controller.h"
#include "sweeps/sweep_service.h"

namespace tf::api {

std::filesystem::path AdminTokenPath(const std::filesystem::path& d) { return d / "admin-token"; }
std::filesystem::path UrlPath(const std::filesystem::path& d) { return d / "url"; }

namespace {

class AppImpl final : public App {
 public:
  explicit AppImpl(const AppOptions& o)
      : options_(o),
        clock_(o.clock ? *o.clock : SystemClock::Get()),
        pool_(static_cast<size_t>(o.blocking_threads)) {}

  ~AppImpl() override {
    Stop();
    Join();
    StopController();
    if (budget_loop_) budget_loop_->Stop();
    pool_.join();  // no store call may outlive the store
  }

  // The SQLite database and its journal files, readable by their owner only (SQLite gives a
  // journal it creates later the database's mode).
  static void KeepSqliteFilesPrivate(std::string url) {
    if (url.starts_with("sqlite://")) {
      url = url.substr(9);
    } else if (url.starts_with("sqlite:")) {
      url = url.substr(7);
    }
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::error_code ec;
      std::filesystem::permissions(
          url + suffix, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
          std::filesystem::perm_options::replace, ec);
    }
  }

  Result<std::unique_ptr<objects::BlobStore>> OpenBlobs() {
    if (options_.objects_url.empty()) {
      return objects::OpenLocalBlobStore(options_.data_dir / "objects");
    }
    TF_ASSIGN_OR_RETURN(s3::BucketLocation location,
                        s3::ParseBucketLocation(options_.objects_url, s3::ProcessEnv()));
    // Requests to the bucket are signed with the real time, whatever clock the app runs on.
    return objects::OpenS3BlobStore(location, options_.data_dir / "objects-spool",
                                    SystemClock::Get());
  }

  Status Init() {
    std::string s3_domain;
    if (!options_.s3_domain.empty()) {
      TF_ASSIGN_OR_RETURN(s3_domain, ValidateVirtualHostDomain(options_.s3_domain));
    }
    std::error_code ec;
    std::filesystem::create_directories(options_.data_dir, ec);
    if (ec)
      return Unavailable("cannot create data directory " + options_.data_dir.string() + ": " +
                         ec.message());
    // Only its owner may enter it: the database holds S3 secrets and running jobs' tokens, and
    // the admin token and the objects are here.
    std::filesystem::permissions(options_.data_dir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
    if (ec) {
      return Unavailable("cannot make data directory " + options_.data_dir.string() +
                         " private (mode 0700): " + ec.message());
    }
    std::string url = options_.store_url.empty() ? (options_.data_dir / "tensorfleet.db").string()
                                                 : options_.store_url;
    TF_ASSIGN_OR_RETURN(store_, store::OpenStore(url));
    if (store_->backend() == "sqlite") KeepSqliteFilesPrivate(url);
    leadership_ = store_->NewLeadership();
    auth_ = std::make_unique<auth::AuthService>(store_->auth(), clock_);
    queues_ = std::make_unique<queues::QueueService>(*store_, clock_);
    store_->SetQueueListener([this](int64_t id) { wakeups_.Notify(id); });
    TF_RETURN_IF_ERROR(auth_->Bootstrap(AdminTokenPath(options_.data_dir)));
    TF_ASSIGN_OR_RETURN(blobs_, OpenBlobs());
    objects_ = std::make_unique<objects::ObjectService>(*store_, *blobs_, clock_, options_.objects);
    datasets_ = std::make_unique<datasets::DatasetService>(*store_, *objects_, clock_);
    jobs::JobServiceOptions job_options;
    job_options.heartbeat_timeout_ms = options_.heartbeat_timeout_ms;
    job_options.lost_node_retention_ms = options_.lost_node_retention_ms;
    jobs_ = std::make_unique<jobs::JobService>(*store_, *auth_, clock_, job_options);
    // Budgets: evaluated and their webhooks called on a thread of their own (cost/budget_loop.h),
    // by the leader only, so that servers sharing a store send each alert once.
    budgets_ = std::make_unique<cost::BudgetService>(
        *store_, *jobs_, clock_,
        [this](const std::string& project, TimeMs since, TimeMs until, TimeMs now) {
          return cost::ProjectSpend(*store_, project, since, until, now);
        });
    budgets_->AllowWebhookHostsOnly(options_.webhook_hosts);
    endpoints_ = std::make_unique<endpoints::EndpointService>(
        *store_, clock_, [this](const endpoints::EndpointSpec& spec) {
          return jobs_->CheckPlaceable(endpoints::ReplicaJobSpec(spec, "check", "unused", ""),
                                       "endpoint " + spec.name + ": a replica cannot be placed");
        });
    replica_runner_ = endpoints::NewJobReplicaRunner(*jobs_, store_->nodes());
    replica_probe_ = endpoints::NewHttpReplicaProbe();
    endpoint_controller_ = std::make_unique<endpoints::EndpointController>(
        *store_, *replica_runner_, *replica_probe_, endpoint_load_, clock_, [this] {
          routing_table_->Invalidate();
          queue_wakeups_.NotifyAll();  // a request waiting for a replica looks again now
        });
    // Servers sharing the store: the leader's controller counts the others' gateway load. Only
    // PostgreSQL is shared (every server of a SQLite file leads, and so publishes nothing).
    const std::string server_id = endpoints::NewServerId();
    const bool shared_store = store_->backend() == "postgresql";
    if (shared_store) {
      endpoint_controller_->CountRemoteLoad(
          std::make_unique<endpoints::RemoteLoad>(store_->endpoints(), clock_, server_id));
      // Every server, leader or not, shows the others what its gateway answered.
      traffic_publisher_ = std::make_unique<endpoints::TrafficPublisher>(
          store_->endpoints(), recent_requests_, clock_, server_id);
    }
    traffic_view_ = std::make_unique<endpoints::TrafficView>(
        recent_requests_, shared_store ? &store_->endpoints() : nullptr, server_id);
    load_publisher_ = std::make_unique<endpoints::LoadPublisher>(store_->endpoints(),
                                                                 endpoint_load_, clock_, server_id);
    sweeps_ = std::make_unique<sweeps::SweepService>(
        store_->documents(), clock_, [this](const jobs::JobSpec& spec, const std::string& source) {
          return jobs_->CheckPlaceable(spec, source);
        });
    trial_runner_ = sweeps::NewJobTrialRunner(*jobs_, *store_, clock_);
    sweep_controller_ =
        std::make_unique<sweeps::SweepController>(store_->documents(), *trial_runner_, clock_);
    jobs_->SetAdmission([this](const std::string& p) { return budgets_->AdmitSubmission(p); });
    pools_ = std::make_unique<pools::PoolService>(*store_, clock_);
    for (const auto& [yaml, source] : options_.declared_pools) {
      auto declared = pools_->Declare(yaml, source);
      if (!declared.ok()) return declared.status().WithContext("declaring the pool at " + source);
      spdlog::info("pool declared at {}: {}", source, *declared);
    }
    jobs_->SetPotentialNodes([this] { return pools_->PotentialNodes(); });
    budget_loop_ = std::make_unique<cost::BudgetLoop>(
        *budgets_, *store_, cost::NewHttpWebhookSender(options_.webhook_hosts), clock_,
        cost::BudgetLoopOptions{
            options_.budget_interval, {}, [this] { return leadership_->Held(); }});
    jobs_->SetListeners(
        [this](const std::string& node) { node_wakeups_.Notify(NodeWakeKey(node)); },
        [this] { KickController(); });
    // Before serving: what a crash left of uploads in progress is removed.
    TF_RETURN_IF_ERROR(objects_->Recover().status());

    services_ =
        std::make_unique<Services>(Services{*store_, *auth_, *queues_, wakeups_, *objects_, *jobs_,
                                            node_wakeups_, pool_, metrics_, clock_, clock_.Now()});
    services_->leadership = leadership_.get();
    router_ = std::make_unique<Router>(*auth_, pool_, metrics_);
    AddSystemRoutes(*router_, *services_, [this](std::string& out) { RenderServerMetrics(out); });
    AddAuthRoutes(*router_, *services_);
    AddQueueRoutes(*router_, *services_);
    AddObjectRoutes(*router_, *services_);
    AddSqsRoutes(*router_, *services_);
    AddS3Routes(*router_, *services_, s3_domain);
    AddJobRoutes(*router_, *services_);
    AddNodeRoutes(*router_, *services_);
    AddJoinTokenRoutes(*router_, *services_);
    AddBudgetRoutes(*router_, *services_, *budgets_, [this] { budget_loop_->Kick(); });
    AddDatasetRoutes(*router_, *services_, *datasets_);
    routing_table_ = std::make_unique<endpoints::RoutingTable>(*store_, clock_);
    AddEndpointRoutes(*router_, *services_, *endpoints_, *traffic_view_,
                      [this] { routing_table_->Invalidate(); });
    for (int i = 0; i < std::max(options_.io_threads, 1); ++i) {
      auto& context = connection_io_.emplace_back(std::make_unique<asio::io_context>(1));
      connection_work_.emplace_back(context->get_executor());
      options_.http.connection_contexts.push_back(context.get());
    }
    AddGatewayRoutes(
        *router_, *services_, *routing_table_, endpoint_load_, queue_wakeups_, gateway_metrics_,
        recent_requests_,
        http::UpstreamPool::Create(io_.get_executor(), options_.http.connection_contexts),
        [this] { KickEndpoints(); });
    metrics_.AddCollector([this](std::string& out) {
      gateway_metrics_.Render(out, endpoint_load_, *routing_table_);
    });
    AddCostRoutes(*router_, *services_);
    AddSweepRoutes(*router_, *services_, *sweeps_, [this] { KickController(); });
    AddPoolRoutes(*router_, *services_, *pools_, [this] { KickPools(); });

    Router* router = router_.get();
    options_.http.stream_body = [router](const http::Request& head) {
      return router->StreamsBody(head);
    };
    options_.http.handler_timeout_for = [router](const http::Request& head) {
      return router->HandlerTimeout(head);
    };
    options_.http.error_response = [router](const http::Request& head, int status,
                                            std::string_view message) {
      return router->Refusal(head, status, message);
    };
    TF_ASSIGN_OR_RETURN(
        server_, http::Server::Start(io_, options_.http,
                                     [router](http::Request& r) { return router->Handle(r); }));
    {
      std::ofstream f(UrlPath(options_.data_dir), std::ios::trunc);
      f << url_for_clients() << "\n";
    }
    spdlog::info("tensorfleet {} serving on {} (store: {}, schema v{})", kVersion,
                 url_for_clients(), store_->backend(), store_->schema_version());

    asio::co_spawn(asio::make_strand(io_), Sweeper(), asio::detached);
    controller_ = std::thread([this] { ControllerLoop(); });
    endpoint_thread_ = std::thread([this] { EndpointLoop(); });
    pool_controller_ = std::make_unique<pools::PoolController>(
        *store_, *jobs_, *auth_, clock_, [this](const pools::PoolSpec& spec) {
          return pools::NewMachineProvider(spec, PoolProviderContext());
        });
    pool_thread_ = std::thread([this] { PoolLoop(); });
    if (options_.handle_signals) {
      signals_ = std::make_unique<asio::signal_set>(io_, SIGINT, SIGTERM);
      signals_->async_wait([this](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        spdlog::info("signal {} received: shutting down gracefully", sig);
        Stop();
      });
    }
    threads_.emplace_back([this] { io_.run(); });
    for (auto& context : connection_io_) {
      threads_.emplace_back([io = context.get()] { io->run(); });
    }
    return OkStatus();
  }

  std::string url() const override { return url_for_clients(); }
  uint16_t port() const override { return server_->port(); }

  void Wait() override {
    {
      MutexLock lock(mu_);
      lock.Wait(cv_, [&]() REQUIRES(mu_) { return stopped_; });
    }
    Join();
  }

  void Stop() override {
    {
      MutexLock lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    // Waiting long polls answer now with what they have (as when their wait ends), instead of
    // holding the graceful shutdown for up to their whole wait.
    wakeups_.Close();
    node_wakeups_.Close();
    if (!server_) {
      Finish();
      return;
    }
    asio::co_spawn(
        io_,
        [this]() -> awaitable<void> {
          sweep_timer_stop_ = true;
          co_await server_->Shutdown(options_.shutdown_grace);
          if (signals_) signals_->cancel();
          if (sweep_timer_) sweep_timer_->cancel();
          Finish();
        },
        asio::detached);
  }

 private:
  std::string url_for_clients() const {
    std::string host = server_->address();
    if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    return "http://" + host + ":" + std::to_string(server_->port());
  }

  // (notify_all: the endpoint loop waits on the same condition variable, and one wake-up taken
  // by it would leave this kick unseen until the next tick.)
  void KickController() {
    MutexLock lock(controller_mu_);
    controller_kicked_ = true;
    controller_cv_.notify_all();
  }

  // The job controller, run by the leader only (store/leadership.h): each server asks for the
  // lead every controller_interval and whenever kicked, and the one that holds it runs Tick.
  // (Every job update also names the version it read, so a leader that lost the lead in the
  // middle of a Tick cannot overwrite its successor's decisions.)
  void ControllerLoop() {
    bool leader = false;
    MutexLock lock(controller_mu_);
    while (!controller_stop_) {
      lock.WaitFor(controller_cv_, options_.controller_interval, [&]() REQUIRES(controller_mu_) {
        return controller_stop_ || controller_kicked_;
      });
      if (controller_stop_) break;
      controller_kicked_ = false;
      lock.Unlock();
      leader = FollowLead(leader);
      if (leader) {
        auto stats = jobs_->Tick();
        if (!stats.ok()) spdlog::warn("job controller: {}", stats.status().ToString());
        // Sweeps start, judge and stop trials' jobs: after the jobs' own tick, with what it
        // decided (sweeps/sweep_controller.h logs each sweep's failures).
        (void)sweep_controller_->Tick();
      }
      lock.Lock();
    }
  }

  // The endpoint controller (endpoints/endpoint_controller.h), on a thread of its own since
  // it waits on replicas' health checks; run by the leader only, like the job controller.
  static constexpr std::chrono::milliseconds kStartingTick{100};

  // It ticks once a second, every kStartingTick while a replica starts, and within
  // kStartingTick when the gateway queues a request (KickEndpoints): a scale-out or a start
  // from zero waits for no full tick. Ticks are never closer than kStartingTick.
  // A server that does not lead publishes its gateway's load for the leader instead
  // (endpoints/shared_load.h), every kStartingTick while it has load, and at once when a
  // request queues.
  void EndpointLoop() {
    MutexLock lock(controller_mu_);
    bool starting = false;
    bool publishing_failed = false;
    bool traffic_failed = false;
    while (!controller_stop_) {
      lock.WaitFor(controller_cv_, kStartingTick,
                   [&]() REQUIRES(controller_mu_) { return controller_stop_; });
      if (!starting) {
        lock.WaitFor(
            controller_cv_, options_.controller_interval - kStartingTick,
            [&]() REQUIRES(controller_mu_) { return controller_stop_ || endpoints_kicked_; });
      }
      if (controller_stop_) break;
      endpoints_kicked_ = false;
      lock.Unlock();
      if (leadership_->Held()) {
        (void)endpoint_controller_->Tick();  // logs its own failures
        starting = endpoint_controller_->starting();
      } else {
        Status published = load_publisher_->Publish();
        if (!published.ok() && !publishing_failed) {
          spdlog::warn("endpoints: this server's gateway load is not reaching the leader: {}",
                       published.ToString());
        }
        publishing_failed = !published.ok();
        starting = load_publisher_->active();
      }
      if (traffic_publisher_) {
        Status published = traffic_publisher_->Publish();
        if (!published.ok() && !traffic_failed) {
          spdlog::warn("endpoints: this server's traffic is not reaching the others: {}",
                       published.ToString());
        }
        traffic_failed = !published.ok();
      }
      lock.Lock();
    }
  }

  // What a pool's workers need to join this server (each machine gets a join token of its
  // own from the controller).
  pools::ProviderContext PoolProviderContext() {
    pools::ProviderContext context;
    context.server_url = url_for_clients();
    std::error_code ec;
    context.binary = options_.tensorfleet_binary.empty()
                         ? std::filesystem::read_symlink("/proc/self/exe", ec)
                         : options_.tensorfleet_binary;
    context.dir = options_.data_dir / "pools";
    return context;
  }

  // The pool controller (pools/pool_controller.h), on a thread of its own since providers
  // may block (and a local pool's workers are this thread's children): run by the leader
  // only, every controller_interval and when a pool changes. Its machines stop with it.
  void PoolLoop() {
    MutexLock lock(controller_mu_);
    while (!controller_stop_) {
      lock.WaitFor(controller_cv_, options_.controller_interval,
                   [&]() REQUIRES(controller_mu_) { return controller_stop_ || pools_kicked_; });
      if (controller_stop_) break;
      pools_kicked_ = false;
      lock.Unlock();
      if (leadership_->Held()) {
        Status ticked = pool_controller_->Tick();
        if (!ticked.ok()) spdlog::warn("pool controller: {}", ticked.ToString());
      }
      lock.Lock();
    }
    lock.Unlock();
    pool_controller_->StopAll();
  }

  void KickPools() {
    MutexLock lock(controller_mu_);
    pools_kicked_ = true;
    controller_cv_.notify_all();
  }

  void KickEndpoints() {
    MutexLock lock(controller_mu_);
    endpoints_kicked_ = true;
    controller_cv_.notify_all();
  }

  // Asks for the lead; says so when this server takes it or loses it.
  bool FollowLead(bool was_leader) {
    bool leads = leadership_->TryAcquire();
    lead_checks_.fetch_add(1, std::memory_order_relaxed);
    if (leads && !was_leader) {
      spdlog::info("this server is now the leader: it runs the job controller");
    } else if (!leads && was_leader) {
      spdlog::warn(
          "this server is no longer the leader: its job controller waits until it "
          "leads again");
    }
    return leads;
  }

  void StopController() {
    {
      MutexLock lock(controller_mu_);
      controller_stop_ = true;
      controller_cv_.notify_all();
    }
    for (std::thread* t : {&controller_, &endpoint_thread_, &pool_thread_}) {
      if (t->joinable() && t->get_id() != std::this_thread::get_id()) t->join();
    }
  }

  void Finish() {
    MutexLock lock(mu_);
    stopped_ = true;
    work_.reset();
    io_.stop();
    connection_work_.clear();
    for (auto& context : connection_io_) context->stop();
    cv_.notify_all();
  }

  void Join() {
    MutexLock lock(join_mu_);
    for (auto& t : threads_) {
      if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
    }
    threads_.clear();
  }

  void RenderServerMetrics(std::string& out) {
    out += "# HELP tensorfleet_http_requests_in_flight Requests being served now.\n";
    out += "# TYPE tensorfleet_http_requests_in_flight gauge\n";
    out += "tensorfleet_http_requests_in_flight " + std::to_string(server_->requests_in_flight()) +
           "\n";
    out += "# HELP tensorfleet_leader 1 if this server leads (runs the job controller), else 0.\n";
    out += "# TYPE tensorfleet_leader gauge\n";
    out += std::string("tensorfleet_leader ") + (leadership_->Held() ? "1" : "0") + "\n";
    out += "# HELP tensorfleet_leader_checks_total Times this server has asked for the lead.\n";
    out += "# TYPE tensorfleet_leader_checks_total counter\n";
    out += "tensorfleet_leader_checks_total " + std::to_string(lead_checks_.load()) + "\n";
  }

  // Removes messages past their retention, and blobs a failed removal left, every
  // sweep_interval.
  awaitable<void> Sweeper() {
    sweep_timer_ = std::make_unique<asio::steady_timer>(co_await asio::this_coro::executor);
    while (!sweep_timer_stop_) {
      auto deleted = co_await RunBlocking(pool_, [this] { return queues_->DeleteExpired(); });
      if (!deleted.ok()) {
        spdlog::warn("retention sweep failed: {}", deleted.status().ToString());
      } else if (*deleted > 0) {
        spdlog::info("retention sweep removed {} expired messages", *deleted);
      }
      auto reclaimed = co_await RunBlocking(pool_, [this] { return objects_->ReclaimPending(); });
      if (!reclaimed.ok()) spdlog::warn("blob sweep failed: {}", reclaimed.status().ToString());
      sweep_timer_->expires_after(options_.sweep_interval);
      boost::system::error_code ec;
      co_await sweep_timer_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }

  AppOptions options_;
  const Clock& clock_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  // The HTTP server's connections, spread over these (http::ServerOptions::connection_contexts),
  // each run by a thread of its own; io_ runs the accept loop, timers and everything else.
  std::vector<std::unique_ptr<asio::io_context>> connection_io_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> connection_work_;
  asio::thread_pool pool_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<auth::AuthService> auth_;
  std::unique_ptr<queues::QueueService> queues_;
  std::unique_ptr<objects::BlobStore> blobs_;
  std::unique_ptr<objects::ObjectService> objects_;
  std::unique_ptr<datasets::DatasetService> datasets_;
  std::unique_ptr<jobs::JobService> jobs_;
  std::unique_ptr<cost::BudgetService> budgets_;
  std::unique_ptr<endpoints::EndpointService> endpoints_;
  endpoints::LoadBoard endpoint_load_;  // fed by the gateway, sampled by the controller
  QueueWakeups queue_wakeups_;          // the gateway's queued requests, woken when room may exist
  endpoints::GatewayMetrics gateway_metrics_;
  endpoints::RecentRequests recent_requests_;
  std::unique_ptr<endpoints::ReplicaRunner> replica_runner_;
  std::unique_ptr<endpoints::ReplicaProbe> replica_probe_;
  std::unique_ptr<endpoints::EndpointController> endpoint_controller_;
  std::unique_ptr<endpoints::LoadPublisher> load_publisher_;  // used while not leading
  // With a shared store: this server's traffic for the others' `describe`, and theirs for its.
  std::unique_ptr<endpoints::TrafficPublisher> traffic_publisher_;
  std::unique_ptr<endpoints::TrafficView> traffic_view_;
  std::unique_ptr<endpoints::RoutingTable> routing_table_;  // the gateway's view of endpoints
  std::unique_ptr<cost::BudgetLoop> budget_loop_;  // its own thread: a dead webhook blocks no one
  queues::QueueWakeups node_wakeups_;
  std::thread controller_;
  std::thread endpoint_thread_;
  std::unique_ptr<pools::PoolService> pools_;
  std::unique_ptr<sweeps::SweepService> sweeps_;
  std::unique_ptr<sweeps::TrialRunner> trial_runner_;
  std::unique_ptr<sweeps::SweepController> sweep_controller_;
  std::unique_ptr<pools::PoolController> pool_controller_;
  std::thread pool_thread_;
  Mutex controller_mu_;
  std::condition_variable controller_cv_;
  bool controller_kicked_ GUARDED_BY(controller_mu_) = false;
  bool endpoints_kicked_ GUARDED_BY(controller_mu_) = false;
  bool pools_kicked_ GUARDED_BY(controller_mu_) = false;
  bool controller_stop_ GUARDED_BY(controller_mu_) = false;
  std::atomic<int64_t> lead_checks_{0};            // FollowLead calls, for /metrics
  std::unique_ptr<store::Leadership> leadership_;  // TryAcquire: the controller thread only
  queues::QueueWakeups wakeups_;
  Metrics metrics_;
  std::unique_ptr<Services> services_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<http::Server> server_;
  std::unique_ptr<asio::signal_set> signals_;
  std::unique_ptr<asio::steady_timer> sweep_timer_;
  std::atomic<bool> sweep_timer_stop_{false};
  std::vector<std::thread> threads_;

  Mutex mu_;
  std::condition_variable cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  Mutex join_mu_;
};

}  // namespace

Result<std::unique_ptr<App>> App::Start(const AppOptions& options) {
  auto app = std::make_unique<AppImpl>(options);
  TF_RETURN_IF_ERROR(app->Init());
  return std::unique_ptr<App>(std::move(app));
}

}  // namespace tf::api
