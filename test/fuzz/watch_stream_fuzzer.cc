// libFuzzer target for what the REST client reads from an API server. The first byte picks the mode.
// Even: a watch stream, cut into pieces whose sizes come from the second byte, through the line splitter
// (a small limit) and the event parser, ERROR events through the status mapping. Odd: a response, its code
// from the second byte and its body the rest, as a get or list reads it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "informers/kube_client.h"
#include "informers/line_splitter.h"

namespace {

constexpr size_t kLineLimit = 4096;

void CheckBounded(const absl::Status& s) {
  if (s.message().size() > liken::informers::kMaxErrorMessageBytes + 200) __builtin_trap();
}

void WatchStream(uint8_t seed, std::string_view input) {
  liken::informers::LineSplitter splitter(kLineLimit);
  size_t line_bytes = 0;
  uint32_t state = seed * 2654435761u + 1;
  while (!input.empty()) {
    state = state * 1103515245u + 12345u;
    size_t piece = 1 + (state >> 16) % 97;
    std::string_view chunk = input.substr(0, piece);
    input.remove_prefix(chunk.size());
    absl::Status s = splitter.Feed(chunk, [&](std::string_view line) -> absl::Status {
      if (line.empty() || line.size() > kLineLimit || line.find('\n') != std::string_view::npos) __builtin_trap();
      line_bytes += line.size();
      auto event = liken::informers::ParseWatchEvent(line);
      if (!event.ok()) return event.status();
      if (!event->object.is_object()) __builtin_trap();
      if (event->type == "ERROR") {
        const auto& code = event->object["code"];
        int c = code.is_number_integer() ? static_cast<int>(code.get<int64_t>() % 1000) : 500;
        absl::Status status = liken::informers::StatusFromHttp(
            c, event->object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        CheckBounded(status);
        return status.ok() ? absl::OkStatus() : status;
      }
      return absl::OkStatus();
    });
    if (splitter.pending_bytes() > kLineLimit) __builtin_trap();
    if (!s.ok()) {
      CheckBounded(s);
      return;
    }
  }
}

void Response(uint8_t code_byte, std::string_view body) {
  int code = 100 + code_byte * 2;  // 100..610
  auto parsed = liken::informers::ParseResponse(code, body);
  if (parsed.ok()) {
    if (code < 200 || code >= 300) __builtin_trap();
  } else {
    CheckBounded(parsed.status());
    (void)liken::informers::HttpCodeOf(parsed.status());
    (void)liken::informers::IsGone(parsed.status());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);
  if (data[0] % 2 == 0) {
    WatchStream(data[1], input);
  } else {
    Response(data[1], input);
  }
  return 0;
}
