"""More file templates with planted credentials, drawn only for the code-secrets benchmark (``code_secrets.jsonl``)."""

from __future__ import annotations

from benchmarks.synthetic.text import tpl

EXTENDED_SECRET_TEMPLATES = [
    tpl(
        "internal/config/config.go",
        "go",
        """
package config

import (
\t"os"
\t"time"
)

// Config holds runtime settings. Maintainer: {{author}} <{{author_email}}>.
type Config struct {
\tDatabaseURL string
\tRedisURL    string
\tAPIKey      string
\tTimeout     time.Duration
}

func Load() Config {
\treturn Config{
\t\tDatabaseURL: getenv("DATABASE_URL", "{{db_url}}"),
\t\tRedisURL:    getenv("REDIS_URL", "{{redis_url}}"),
\t\tAPIKey:      "{{api_key}}",
\t\tTimeout:     15 * time.Second,
\t}
}

func getenv(key, fallback string) string {
\tif v, ok := os.LookupEnv(key); ok {
\t\treturn v
\t}
\treturn fallback
}
""",
        extended=True,
    ),
    tpl(
        "cmd/worker/main.go",
        "go",
        """
package main

import (
\t"log"

\t"github.com/aws/aws-sdk-go-v2/credentials"
)

const (
\taccessKey = "{{aws_key}}"
\tsecretKey = "{{aws_secret}}"
\tqueueURL  = "https://sqs.{{region}}.amazonaws.com/{{batch}}/{{svc}}-jobs"
)

func main() {
\tcreds := credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")
\tw, err := newWorker(creds, queueURL)
\tif err != nil {
\t\tlog.Fatalf("worker init: %v", err)
\t}
\tw.Run()
}
""",
        extended=True,
    ),
    tpl(
        "src/api/client.ts",
        "typescript",
        """
import fetch from 'node-fetch';

// TODO({{home_user}}): move these to the secrets manager before GA.
const API_KEY = '{{api_key}}';
const BASE = '{{api_url}}';

export interface Invoice {
  id: string;
  total: number;
  status: 'open' | 'paid' | 'void';
}

export async function listInvoices(customer: string): Promise<Invoice[]> {
  const res = await fetch(`${BASE}/customers/${encodeURIComponent(customer)}/invoices`, {
    headers: { 'x-api-key': API_KEY },
  });
  if (!res.ok) throw new Error(`invoice fetch failed: ${res.status}`);
  return (await res.json()) as Invoice[];
}
""",
        extended=True,
    ),
    tpl(
        "src/db.ts",
        "typescript",
        """
import { Pool } from 'pg';

export const pool = new Pool({
  connectionString: process.env.DATABASE_URL ?? '{{db_url}}',
  max: 10,
  idleTimeoutMillis: 30_000,
});

export async function healthcheck(): Promise<boolean> {
  const { rows } = await pool.query('select 1 as ok');
  return rows[0]?.ok === 1;
}
""",
        extended=True,
    ),
    tpl(
        "config/app.ini",
        "ini",
        """
[server]
host = 0.0.0.0
port = {{port}}

[database]
host = {{db_host}}
user = {{db_user}}
password = {{db_pass}}
name = {{db_name}}

[mail]
username = {{smtp_user}}
password = {{smtp_pass}}
""",
        extended=True,
    ),
    tpl(
        ".pypirc",
        "ini",
        """
[distutils]
index-servers =
    internal

[internal]
repository = {{api_url}}
username = {{deploy_user}}
password = {{admin_pass}}
""",
        extended=True,
    ),
    tpl(
        "config/app.toml",
        "toml",
        """
[service]
name = "{{svc}}"
region = "{{region}}"

[database]
url = "{{db_url}}"
pool_size = 8

[auth]
jwt_secret = "{{jwt_secret}}"
token_ttl = "15m"
?|
?|[github]
?|token = "{{gh_token}}"
""",
        extended=True,
    ),
    tpl(
        "Dockerfile",
        "dockerfile",
        """
FROM python:3.12-slim@sha256:{{digest}}

ARG PIP_INDEX_URL
ENV PYTHONUNBUFFERED=1 \\
    APP_ENV=production \\
    DATABASE_URL={{db_url}} \\
    SENTRY_KEY={{api_key}}

WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
CMD ["gunicorn", "-b", "0.0.0.0:{{port}}", "{{svc}}.wsgi:app"]
""",
        extended=True,
    ),
    tpl(
        "deploy/k8s/secret.yaml",
        "yaml",
        """
apiVersion: v1
kind: Secret
metadata:
  name: {{svc}}-secrets
  namespace: {{svc}}
type: Opaque
stringData:
  DATABASE_URL: "{{db_url}}"
  JWT_SECRET: "{{jwt_secret}}"
?|  SLACK_BOT_TOKEN: "{{slack_token}}"
  tls.key: |
    {{pem_yaml}}
""",
        extended=True,
    ),
    tpl(
        "deploy/k8s/deployment.yaml",
        "yaml",
        """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{svc}}
  labels:
    app: {{svc}}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: {{svc}}
  template:
    metadata:
      labels:
        app: {{svc}}
    spec:
      containers:
        - name: {{svc}}
          image: registry.example.com/{{svc}}@sha256:{{digest}}
          env:
            - name: REDIS_URL
              value: "{{redis_url}}"
            - name: ADMIN_PASSWORD
              value: "{{admin_pass}}"
          ports:
            - containerPort: {{port}}
""",
        extended=True,
    ),
    tpl(
        ".npmrc",
        "ini",
        """
registry=https://registry.npmjs.org/
@{{corp}}:registry=https://npm.pkg.github.com/
//npm.pkg.github.com/:_authToken={{gh_token}}
always-auth=true
""",
        extended=True,
    ),
    tpl(
        "infra/main.tf",
        "terraform",
        """
provider "aws" {
  region     = "{{region}}"
  access_key = "{{aws_key}}"
  secret_key = "{{aws_secret}}"
}

resource "aws_db_instance" "{{svc}}" {
  identifier        = "{{svc}}-prod"
  engine            = "postgres"
  instance_class    = "db.t3.medium"
  allocated_storage = 50
  username          = "{{db_user}}"
  password          = "{{db_pass}}"
  skip_final_snapshot = false
}
""",
        extended=True,
    ),
    tpl(
        "src/main/resources/application.properties",
        "properties",
        """
server.port={{port}}
spring.datasource.url={{jdbc_url}}
spring.datasource.username={{db_user}}
spring.datasource.password={{db_pass}}
spring.mail.username={{smtp_user}}
spring.mail.password={{smtp_pass}}
management.endpoints.web.exposure.include=health,info
""",
        extended=True,
    ),
    tpl(
        "dotfiles/.bash_profile",
        "shell",
        """
# {{home_user}}'s shell profile
export PATH="/home/{{home_user}}/.local/bin:/home/{{home_user}}/go/bin:$PATH"
export EDITOR=vim
export AWS_PROFILE={{svc}}-dev
export GITHUB_TOKEN={{gh_token}}
?|export OPENWEATHER_API_KEY={{api_key2}}
alias k=kubectl
alias proddb='psql "{{db_url}}"'
""",
        extended=True,
    ),
    tpl(
        "public/wp-config.php",
        "php",
        """
<?php
// ** Database settings ** //
define( 'DB_NAME', '{{db_name}}' );
define( 'DB_USER', '{{db_user}}' );
define( 'DB_PASSWORD', '{{db_pass}}' );
define( 'DB_HOST', '{{db_host}}' );
define( 'DB_CHARSET', 'utf8mb4' );

define( 'AUTH_KEY', '{{jwt_secret}}' );
define( 'WP_DEBUG', false );

$table_prefix = 'wp_';
require_once ABSPATH . 'wp-settings.php';
""",
        extended=True,
    ),
    tpl(
        "scripts/migrate.py",
        "python",
        '''
"""One-off data migration between the legacy MySQL database and Postgres."""

import sqlalchemy as sa

LEGACY = sa.create_engine("{{mysql_url}}")
TARGET = sa.create_engine("{{db_url}}")
BATCH = {{batch}}


def copy_table(name: str) -> int:
    moved = 0
    with LEGACY.connect() as src, TARGET.begin() as dst:
        for chunk in src.execution_options(stream_results=True).execute(sa.text(f"SELECT * FROM {name}")):
            dst.execute(sa.text(f"INSERT INTO {name} VALUES :row"), {"row": tuple(chunk)})
            moved += 1
    return moved
''',
        extended=True,
    ),
    tpl(
        "notebooks/explore_mongo.py",
        "python",
        """
# Scratch analysis by {{author}}; run from /home/{{home_user}}/work/{{svc}}
from pymongo import MongoClient

client = MongoClient("{{mongo_url}}")
events = client["{{db_name}}"]["events"]
print(events.count_documents({"type": "checkout"}))
""",
        extended=True,
    ),
]
