#include "kubelet/claim_ref.h"

#include <gtest/gtest.h>

namespace liken::kubelet {
namespace {

TEST(ValidateClaimRefsTest, AcceptsWellFormedClaims) {
  EXPECT_TRUE(ValidateClaimRefs({}).ok());
  EXPECT_TRUE(ValidateClaimRefs({{"default", "0b3a8e52-1111-4222-8333-444455556666", "my-claim.v2"}}).ok());
}

TEST(ValidateClaimRefsTest, RejectsMalformedClaims) {
  const std::vector<std::vector<ClaimRef>> bad = {
      {{"ns", "", "n"}},        {{"ns", "-x", "n"}},          {{"ns", "a/b", "n"}},
      {{"ns", std::string(129, 'a'), "n"}}, {{"", "u", "n"}},  {{"NS", "u", "n"}},
      {{"ns", "u", ""}},        {{"ns", "u", "a b"}},         {{"ns", "u", "n"}, {"ns", "u", "m"}},
  };
  for (const auto& claims : bad) {
    absl::Status s = ValidateClaimRefs(claims);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << claims[0].uid << " " << claims[0].name;
    EXPECT_NE(s.message().find("claims["), absl::string_view::npos) << s;
  }
}

}  // namespace
}  // namespace liken::kubelet
