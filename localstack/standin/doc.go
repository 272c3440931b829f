// Package standin is a small S3 server for tests and CI: gofakes3 with an
// in-memory backend, behind AWS Signature Version 4 verification, with a
// log of every request it receives.
//
// # Usage
//
//	srv, err := standin.Start(ctx, standin.Config{Buckets: []string{"lake"}})
//	if err != nil { ... }
//	defer srv.Close()
//	// point the AWS SDK at srv.URL() with path-style addressing, region
//	// us-east-1 and static credentials test/test.
//	...
//	for _, r := range srv.Requests() { ... } // method, path, query, copy source, delete keys, status
//
// A *Server is also an http.Handler (New builds one without listening).
// cmd/standin runs one from the command line.
//
// # What it checks
//
//   - Every request must carry a valid SigV4 signature, in the Authorization
//     header or as a presigned URL, made with the configured credentials
//     (default test/test) for the configured region (default us-east-1) and
//     service s3; otherwise it answers 403 and gofakes3 never sees it.
//     Header-signed requests must be within 15 minutes of the clock,
//     presigned ones within their X-Amz-Expires window (at most 7 days).
//   - Every x-amz-* header and Content-MD5 present must be signed.
//   - A hex x-amz-content-sha256 must match the body; UNSIGNED-PAYLOAD is
//     accepted; streaming (aws-chunked) payloads are refused with 501.
//   - If-None-Match: * is honoured on PutObject (by gofakes3) and, unlike
//     gofakes3 alone, on CopyObject and CompleteMultipartUpload.
//
// # What it is not
//
// It is not a faithful S3: no virtual-hosted addressing, no ACLs or bucket
// policies, no server-side checksums beyond echoing stored x-amz-checksum-*
// headers, and everything lives in memory. It serves plain HTTP; use it
// only on 127.0.0.1.
package standin
