// Baselines for the daemon's footprint: what the two large libraries of the design card cost in a process of
// their own, linked as the product binary links them. Prints figures; asserts nothing.
//
//   liken_library_floor grpc-server SOCKET   a gRPC server with the daemon's sync-server options serving the DRA
//                                            v1 service (every method unimplemented) and gRPC's own health
//                                            service on a unix socket, idle
//   liken_library_floor http-client KUBECONFIG
//                                            the daemon's API client (cpprestsdk over TLS, the kubeconfig's CA
//                                            and credentials, two I/O threads) after one GET /version, idle
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

// "VmRSS=… RssAnon=… RssFile=… Threads=…" from /proc/self/status.
std::string StatusFigures() {
  std::ifstream status("/proc/self/status");
  std::string line, out;
  for (const char* key : {"VmRSS:", "RssAnon:", "RssFile:", "Threads:"}) {
    status.clear();
    status.seekg(0);
    while (std::getline(status, line)) {
      if (line.rfind(key, 0) != 0) continue;
      std::string value = line.substr(line.find_first_not_of(" \t", std::string(key).size()));
      out += std::string(key, std::string(key).size() - 1) + "=" + value + " ";
    }
  }
  return out;
}

int Usage() {
  std::fputs("usage: liken_library_floor grpc-server SOCKET | http-client KUBECONFIG [--settle-seconds N]\n", stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  const std::string mode = argv[1];
  int settle = 3;
  if (argc == 5 && std::string(argv[3]) == "--settle-seconds") settle = std::atoi(argv[4]);
  ::mallopt(M_ARENA_MAX, 2);  // as the daemon does

  k8s::io::kubelet::pkg::apis::dra::v1::DRAPlugin::Service dra;  // a sync service, as the daemon serves
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<liken::Clock> clock;
  std::unique_ptr<liken::informers::KubeClient> client;
  std::stop_source stop;
  if (mode == "grpc-server") {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(std::string("unix://") + argv[2], grpc::InsecureServerCredentials());
    builder.RegisterService(&dra);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::CQ_TIMEOUT_MSEC, 60 * 1000);
    server = builder.BuildAndStart();
    if (server == nullptr) {
      std::fprintf(stderr, "liken_library_floor: cannot serve on %s\n", argv[2]);
      return 1;
    }
  } else if (mode == "http-client") {
    auto config = liken::informers::LoadKubeconfig(argv[2]);
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
  } else {
    return Usage();
  }
  std::this_thread::sleep_for(std::chrono::seconds(settle));
  ::malloc_trim(0);
  std::printf("%s\n", StatusFigures().c_str());
  if (server != nullptr) server->Shutdown();
  stop.request_stop();
  return 0;
}
