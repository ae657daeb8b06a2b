#include "kubelet/claim_ref.h"
#include "common/text.h"

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

// "." and ".." would become API path segments (/namespaces/../resourceclaims/...): they are no DNS names.
TEST(ValidateClaimRefsTest, RejectsDotNamesAndNamespacesThatAreNoDnsLabels) {
  const std::vector<ClaimRef> bad = {
      {"ns", "u", "."},    {"ns", "u", ".."},  {"..", "u", "n"},    {".", "u", "n"},
      {"a.b", "u", "n"},   {"ns", "u", "a..b"}, {"ns", "u", ".a"},  {"ns", "u", "a-"},
      {"-ns", "u", "n"},   {std::string(64, 'a'), "u", "n"},       {"ns", "u", std::string(254, 'a')},
  };
  for (const auto& claim : bad) {
    absl::Status s = ValidateClaimRefs({claim});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << claim.namespace_name << " " << claim.name;
  }
  EXPECT_TRUE(ValidateClaimRefs({{std::string(63, 'a'), "u", "a.b-c.d"}}).ok());
  EXPECT_TRUE(ValidateClaimRefs({{"ns", "u", std::string(63, 'a') + "." + std::string(63, 'b')}}).ok());
}

TEST(ValidateClaimRefsTest, EchoesOnlyAShortEscapedPrefixOfBadInput) {
  const std::string huge(1 << 20, 'x');
  absl::Status uid = ValidateClaimRefs({{"ns", huge + "/", "n"}});
  EXPECT_EQ(uid.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(uid.message().size(), 300u) << "a 1 MB UID is not echoed back whole";
  EXPECT_NE(uid.message().find("1048577 bytes"), absl::string_view::npos) << uid;
  absl::Status name = ValidateClaimRefs({{"ns", "u", huge}});
  EXPECT_LT(name.message().size(), 300u);
  absl::Status ns = ValidateClaimRefs({{huge, "u", "n"}});
  EXPECT_LT(ns.message().size(), 300u);
  absl::Status control = ValidateClaimRefs({{"ns", "u", std::string("a\nb\x01", 5)}});
  EXPECT_EQ(control.message().find('\n'), absl::string_view::npos) << "control bytes are escaped";
  EXPECT_EQ(EchoInput("abc"), "'abc'");
}

}  // namespace
}  // namespace liken::kubelet
