// Package stagetest is shared test scaffolding for lakegate/stage: backends
// to test against, the operation case table and the two-tenant isolation
// suite.
//
// # Usage
//
//	func TestStores(t *testing.T) {
//		for _, b := range []*stagetest.Backend{stagetest.Local(t), stagetest.S3(t)} {
//			t.Run(b.Name, func(t *testing.T) { stagetest.Run(t, b.Open) })
//		}
//	}
//
// S3 uses LocalStack or AWS when AWS_ENDPOINT_URL is set (bucket
// $LAKEGATE_TEST_BUCKET, default "lakegate", credentials from the SDK
// chain, region us-east-1, path-style), and otherwise starts the in-process
// stand-in (lakegate/localstack/standin) on 127.0.0.1:0 with test/test, so
// nothing ever skips. Every Backend works under a fresh random prefix or
// directory, torn down with t.Cleanup.
//
// FaultyS3 is the S3 backend on a stand-in that misbehaves on demand: it
// fails chosen requests with 5xx errors, cuts listing answers into small
// pages, lets a test rewrite listing answers (keys outside the stage,
// inconsistent truncation) and logs each request with its signing region,
// so unit tests reach what a store does when S3 fails or lies.
//
// Run returns a transcript so callers can assert that backends behave
// identically; RunIsolation checks containment with controls proving each
// escape would be real without the stage layer.
package stagetest
