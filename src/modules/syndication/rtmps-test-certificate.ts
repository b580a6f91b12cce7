/**
 * A self-signed certificate for localhost and 127.0.0.1 (valid 2000-2100) and its key, for the
 * RTMPS tests only: the fake RTMPS server presents it and the probe trusts it through `ca`.
 * Not a secret of any deployment.
 */
export const testCertificatePem = `-----BEGIN CERTIFICATE-----
MIIBVDCB/KADAgECAgEBMAoGCCqGSM49BAMCMBQxEjAQBgNVBAMMCWxvY2FsaG9z
dDAgFw0wMDAxMDEwMDAwMDBaGA8yMTAwMDEwMTAwMDAwMFowFDESMBAGA1UEAwwJ
bG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEGtYUlb5OCSb5n5re
y8tnyUSTP57w66DwiIcQQ5KqOjx7O9mrB9cDTK2UDpJnl1h7HJPOe59epfxZCPcX
QG8iVqM9MDswGgYDVR0RBBMwEYIJbG9jYWxob3N0hwR/AAABMB0GA1UdDgQWBBRu
hCF0rtK342p6VI1fgLXfOAz3azAKBggqhkjOPQQDAgNHADBEAiA6qfFEGxMkaJQz
eyTJwHXRGIZwjc14uN6gKREOYPZ4nQIgP9CJU1O213USomSyFFC6J4if4Pj0PxNq
xFa0gkAkxbM=
-----END CERTIFICATE-----
`;

export const testPrivateKeyPem = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgYx3zjGOKEHKS4W21
kc1E1QkVLCZKNXDhsKHruXm0DbGhRANCAAQa1hSVvk4JJvmfmt7Ly2fJRJM/nvDr
oPCIhxBDkqo6PHs72asH1wNMrZQOkmeXWHsck857n16l/FkI9xdAbyJW
-----END PRIVATE KEY-----
`;
