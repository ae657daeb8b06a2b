// A self-signed certificate made for these tests only, shared by the REST client tests and the kubeconfig fuzzer.
#pragma once

namespace liken::testing {

inline constexpr char kTestCertPem[] = R"(-----BEGIN CERTIFICATE-----
MIIBgDCCASegAwIBAgIUN/tH1cvfcV19wwY7htvZLHzkdvMwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKbGlrZW4tdGVzdDAgFw0yNjEyMDExMzE3NTlaGA8yMTI2MTEw
NzEzMTc1OVowFTETMBEGA1UEAwwKbGlrZW4tdGVzdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABBTkl8m+OYrOZ2UQBYkPu9CdVRtvbma1h4rgewvyI8FYWg3/b8m+
qR+2/Dr/vKsFl4o571/OuJUuj+4FLHXgMyijUzBRMB0GA1UdDgQWBBQzvD3lQenw
86p+9+dcjN5bLwoBATAfBgNVHSMEGDAWgBQzvD3lQenw86p+9+dcjN5bLwoBATAP
BgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIFcR1yUaCs7+Fm5hf4sb
taEs4q8oAx7Pr5A/3E89Ath/AiBP+BUSxaDYQF5rQ7veiasPDjs+drxaAE792I6g
vEuTWQ==
-----END CERTIFICATE-----
)";

}  // namespace liken::testing
