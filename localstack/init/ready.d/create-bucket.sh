#!/bin/sh
# LocalStack init hook (ready stage): create the bucket lakegate's tests use.
set -eu
bucket="${LAKEGATE_BUCKET:-lakegate}"
if awslocal s3api head-bucket --bucket "$bucket" 2>/dev/null; then
	echo "lakegate: bucket $bucket exists"
else
	awslocal s3api create-bucket --bucket "$bucket" --region us-east-1
	echo "lakegate: created bucket $bucket"
fi
