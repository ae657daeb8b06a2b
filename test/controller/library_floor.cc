// Baselines for the daemon's footprint: what the two large libraries of the design card cost in a process of
// their own, linked as the product binary links them. Prints figures; asserts nothing.
//
//   liken_library_floor bare                 nothing but this binary and its libraries loaded
//   liken_library_floor grpc-server SOCKET   a gRPC server with the daemon's sync-server options serving the DRA
//                                            v1 service (every method unimplemented) and gRPC's own health
//                                            service on a unix socket, idle
//   liken_library_floor http-client KUBECONFIG
//                                            the daemon's API client (cpprestsdk over TLS, the kubeconfig's CA
//                                            and credentials, two I/O threads) after one GET /version, idle
//   liken_library_floor both SOCKET KUBECONFIG
//                                            the two together in one process
//
// After the work, it waits --settle-seconds (default 3), then prints one line of /proc/self/status figures.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "common/clock.h"
#include "kubelet/proto/dra_v1.grpc.pb.h"
#include "informers/kube_config.h"
#include "informers/rest_client.h"

namespace {

// "VmRSS=… RssAnon=… RssFile=… Threads=…" from /proc/self/status (in its order).
std::string StatusFigures() {
  std::ifstream status("/proc/self/status");
  std::string line, out;
  while (std::getline(status, line)) {
    for (const std::string key : {"VmRSS", "RssAnon", "RssFile", "Threads"}) {
      if (line.rfind(key + ":", 0) != 0) continue;
      out += key + "=" + line.substr(line.find_first_not_of(" \t", key.size() + 1)) + " ";
    }
  }
  return out;
}

int Usage() {
  std::fputs(
      "usage: liken_library_floor bare | grpc-server SOCKET | http-client KUBECONFIG | both SOCKET KUBECONFIG"
      " [--settle-seconds N]\n",
      stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  const int operands = mode == "bare" ? 0 : mode == "both" ? 2 : 1;
  if (mode != "bare" && mode != "grpc-server" && mode != "http-client" && mode != "both") return Usage();
  if (argc != 2 + operands && !(argc == 4 + operands && std::string(argv[2 + operands]) == "--settle-seconds")) {
    return Usage();
  }
  const int settle = argc == 4 + operands ? std::atoi(argv[3 + operands]) : 3;
  const char* socket = mode == "grpc-server" || mode == "both" ? argv[2] : nullptr;
  const char* kubeconfig = mode == "http-client" ? argv[2] : mode == "both" ? argv[3] : nullptr;
  ::mallopt(M_ARENA_MAX, 2);  // as the daemon does

  k8s::io::kubelet::pkg::apis::dra::v1::DRAPlugin::Service dra;  // a sync service, as the daemon serves
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<liken::Clock> clock;
  std::unique_ptr<liken::informers::KubeClient> client;
  std::stop_source stop;
  if (socket != nullptr) {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(std::string("unix://") + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(&dra);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::CQ_TIMEOUT_MSEC, 60 * 1000);
    server = builder.BuildAndStart();
    if (server == nullptr) {
      std::fprintf(stderr, "liken_library_floor: cannot serve on %s\n", socket);
      return 1;
    }
  }
  if (kubeconfig != nullptr) {
    auto config = liken::informers::LoadKubeconfig(kubeconfig);
    if (!config.ok()) {
      std::fprintf(stderr, "liken_library_floor: %s\n", config.status().ToString().c_str());
      return 1;
    }
    liken::informers::SetHttpThreads(2);  // as the daemon does
    clock = liken::NewRealClock();
    auto made = liken::informers::NewRestClient(*config, clock.get(), stop.get_token());
    if (!made.ok()) {
      std::fprintf(stderr, "liken_library_floor: %s\n", made.status().ToString().c_str());
      return 1;
    }
    client = *std::move(made);
    auto version = client->Get("/version");
    if (!version.ok()) {
      std::fprintf(stderr, "liken_library_floor: GET /version: %s\n", version.status().ToString().c_str());
      return 1;
    }
  }
  std::this_thread::sleep_for(std::chrono::seconds(settle));
  ::malloc_trim(0);
  std::printf("%s\n", StatusFigures().c_str());
  if (server != nullptr) server->Shutdown();
  stop.request_stop();
  return 0;
}
