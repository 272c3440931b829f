package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"

	"lakegate/stage"
)

// credentialsTimeout bounds the search for AWS credentials at start (the
// SDK's chain ends with the EC2 instance metadata service, which does not
// answer off EC2).
const credentialsTimeout = 15 * time.Second

// s3Config loads the AWS SDK configuration for the S3 stage d and checks
// that it yields credentials, so that a missing credential is one line at
// start instead of the SDK's chain of errors at the first write. The SDK's
// own log lines (its fallbacks while searching) are dropped.
func s3Config(ctx context.Context, d stage.Descriptor) (*aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(logging.Nop{}))
	if err != nil {
		return nil, fmt.Errorf("S3 stage %s: loading the AWS configuration: %w", d, err)
	}
	ctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return nil, fmt.Errorf("S3 stage %s: no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run with an instance role", d)
	}
	return &cfg, nil
}
