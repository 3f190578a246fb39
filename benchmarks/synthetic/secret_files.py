"""File templates with planted credentials, the families every data set draws from."""

from __future__ import annotations

from benchmarks.synthetic.text import tpl

BASE_SECRET_TEMPLATES = [
    tpl(
        "src/{svc}/settings.py",
        "python",
        '''
"""Runtime settings for the {{svc}} service.

Owner: {{author}} <{{author_email}}>
"""

import os

DEBUG = os.environ.get("DEBUG", "0") == "1"
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")

DATABASE_URL = os.environ.get(
    "DATABASE_URL",
    "{{db_url}}",
)
?|AWS_ACCESS_KEY_ID = "{{aws_key}}"
?|AWS_SECRET_ACCESS_KEY = "{{aws_secret}}"
AWS_REGION = "{{region}}"
S3_BUCKET = "{{svc}}-exports"

# Vendored from upstream at commit {{sha}}; drop once the retry fix is released.
RETRY_BACKOFF_SECONDS = (1, 2, 5, 10, 30)
MAX_BATCH_SIZE = {{batch}}


def pool_options() -> dict:
    """Options shared by the API process and the background workers."""
    return {"pool_size": 10, "max_overflow": 5, "pool_recycle": 1800, "pool_pre_ping": True}
''',
    ),
    tpl(
        "src/{svc}/notify.py",
        "python",
        '''
import json
import logging
import urllib.request

log = logging.getLogger(__name__)

SLACK_BOT_TOKEN = "{{slack_token}}"
ALERT_CHANNEL = "#{{svc}}-alerts"
?|ONCALL_EMAIL = "{{author2_email}}"


def post_alert(text: str, severity: str = "warning") -> bool:
    """Send an alert to Slack; returns False instead of raising so callers never crash."""
    body = json.dumps({"channel": ALERT_CHANNEL, "text": f"[{severity}] {text}"}).encode()
    req = urllib.request.Request(
        "https://slack.com/api/chat.postMessage",
        data=body,
        headers={"Authorization": "Bearer " + SLACK_BOT_TOKEN, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.load(resp).get("ok", False)
    except OSError as exc:
        log.warning("slack post failed: %s", exc)
        return False
''',
    ),
    tpl(
        "tools/sync_tags.py",
        "python",
        '''
"""Mirror release tags from GitHub into the internal artifact index."""

from __future__ import annotations

import requests

GITHUB_TOKEN = "{{gh_token}}"
INDEX_URL = "{{api_url}}"


def fetch_tags(repo: str) -> list[str]:
    resp = requests.get(
        f"https://api.github.com/repos/{repo}/tags",
        headers={"Authorization": f"token {GITHUB_TOKEN}"},
        timeout=10,
    )
    resp.raise_for_status()
    return [tag["name"] for tag in resp.json()]


def publish(repo: str) -> int:
    tags = fetch_tags(repo)
    for name in tags:
        requests.post(INDEX_URL + "/tags", json={"repo": repo, "tag": name}, timeout=10)
    return len(tags)
''',
    ),
    tpl(
        "src/{svc}/signing.py",
        "python",
        '''
"""Sign outgoing webhook payloads. Key rotation: ask {{author2}}."""

import hashlib
import hmac
import time

SIGNING_KEY = """{{pem}}"""
WEBHOOK_SECRET = "{{jwt_secret}}"


def sign(body: bytes, ts: int | None = None) -> str:
    ts = ts or int(time.time())
    mac = hmac.new(WEBHOOK_SECRET.encode(), f"{ts}.".encode() + body, hashlib.sha256)
    return f"t={ts},v1={mac.hexdigest()}"
''',
    ),
    tpl(
        "src/config.js",
        "javascript",
        """
'use strict';

// Service configuration. Ask {{author}} ({{author_email}}) before changing the defaults.
module.exports = {
  port: Number(process.env.PORT || {{port}}),
  jwtSecret: process.env.JWT_SECRET || '{{jwt_secret}}',
  redisUrl: process.env.REDIS_URL || '{{redis_url}}',
?|  apiKey: '{{api_key}}',
  upstream: '{{api_url}}',
  cacheTtlSeconds: 300,
  buildSha: '{{sha}}',
};
""",
    ),
    tpl(
        "src/lib/apiClient.js",
        "javascript",
        """
const axios = require('axios');

const SERVICE_TOKEN = '{{jwt}}';
const BASE_URL = '{{api_url}}';

async function getInvoices(customerId, { includeVoid = false } = {}) {
  const res = await axios.get(`${BASE_URL}/customers/${customerId}/invoices`, {
    headers: { Authorization: `Bearer ${SERVICE_TOKEN}` },
    timeout: 8000,
  });
  return res.data.items.filter((inv) => includeVoid || inv.status !== 'void');
}

module.exports = { getInvoices };
""",
    ),
    tpl(
        "docker-compose.yml",
        "yaml",
        """
services:
  db:
    image: postgres:16@sha256:{{digest}}
    environment:
      POSTGRES_USER: "{{db_user}}"
      POSTGRES_PASSWORD: "{{db_pass}}"
      POSTGRES_DB: "{{db_name}}"
    volumes:
      - pgdata:/var/lib/postgresql/data
  api:
    build: .
    ports:
      - "{{port}}:{{port}}"
    environment:
      DATABASE_URL: "{{db_url}}"
?|      AWS_ACCESS_KEY_ID: "{{aws_key}}"
?|      AWS_SECRET_ACCESS_KEY: "{{aws_secret}}"
    depends_on:
      - db
volumes:
  pgdata: {}
""",
    ),
    tpl(
        "config/settings.yaml",
        "yaml",
        """
app:
  name: {{svc}}
  workers: 4
  upstream: "{{api_url}}"
database:
  host: {{db_host}}
  port: 5432
  user: {{db_user}}
  password: "{{db_pass}}"
  pool: 12
mail:
  user: "{{smtp_user}}"
  password: "{{smtp_pass}}"
?|admins:
?|  - "{{author_email}}"
features:
  exports: true
  beta_search: false
""",
    ),
    tpl(
        ".env",
        "dotenv",
        """
# local overrides - do not commit
NODE_ENV=development
PORT={{port}}
DATABASE_URL={{db_url}}
?|REDIS_URL={{redis_url}}
?|AWS_ACCESS_KEY_ID={{aws_key}}
?|AWS_SECRET_ACCESS_KEY={{aws_secret}}
?|GITHUB_TOKEN={{gh_token}}
?|SLACK_BOT_TOKEN={{slack_token}}
SMTP_USER={{smtp_user}}
SMTP_PASSWORD={{smtp_pass}}
?|ADMIN_PASSWORD={{admin_pass}}
FEATURE_FLAGS=search,exports
""",
    ),
    tpl(
        "config/appsettings.json",
        "json",
        """
{
  "Logging": { "LogLevel": { "Default": "Information", "Microsoft": "Warning" } },
  "ConnectionStrings": {
    "Default": "{{ado_conn}}"
  },
  "Smtp": { "Host": "smtp.office365.com", "User": "{{smtp_user}}", "Password": "{{smtp_pass}}" },
?|  "Payments": { "ApiKey": "{{api_key}}", "TimeoutSeconds": 20 },
  "AllowedHosts": "*"
}
""",
    ),
    tpl(
        "config/service-account.json",
        "json",
        """
{
  "type": "service_account",
  "project_id": "{{svc}}-prod",
  "private_key_id": "{{api_key2}}",
  "private_key": "{{pem_json}}",
  "client_email": "{{smtp_user}}",
  "client_id": "1{{batch}}{{port}}"
}
""",
    ),
    tpl(
        "scripts/deploy.sh",
        "shell",
        """
#!/usr/bin/env bash
set -euo pipefail

# Deploy {{svc}} to the staging hosts. Run from the repo root.
DEPLOY_HOST="{{internal_ip}}"
DEPLOY_USER="{{deploy_user}}"
export GITHUB_TOKEN='{{gh_token}}'

npm ci && npm run build
rsync -az --delete ./dist/ "${DEPLOY_USER}@${DEPLOY_HOST}:/srv/{{svc}}/"
ssh -i /home/{{home_user}}/.ssh/id_ed25519 "${DEPLOY_USER}@${DEPLOY_HOST}" 'sudo systemctl restart {{svc}}'
?|curl -fsS -H "Authorization: Bearer {{jwt}}" "{{api_url}}/deploys" -d "sha=$(git rev-parse HEAD)"
echo "deployed $(git rev-parse --short HEAD)"
""",
    ),
    tpl(
        "scripts/backup_db.sh",
        "shell",
        """
#!/bin/sh
# Nightly logical backup; cron on {{internal_ip2}} as {{deploy_user}}.
set -e
STAMP=$(date +%Y%m%d)
export PGPASSWORD='{{db_pass}}'
pg_dump -h {{db_host}} -U {{db_user}} -Fc {{db_name}} > "/home/{{home_user}}/backups/{{db_name}}-$STAMP.dump"
find /home/{{home_user}}/backups -name '*.dump' -mtime +14 -delete
""",
    ),
    tpl(
        "src/main/java/com/{corp}/{svc}/DataSourceConfig.java",
        "java",
        """
package com.{{corp}}.{{svc}};

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Connection pool for the primary database. Contact: {{author_email}} */
@Configuration
public class DataSourceConfig {

    private static final String JDBC_URL = "{{jdbc_url}}";
    private static final String USERNAME = "{{db_user}}";
    private static final String PASSWORD = "{{db_pass}}";

    @Bean
    public DataSource dataSource() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(JDBC_URL);
        config.setUsername(USERNAME);
        config.setPassword(PASSWORD);
        config.setMaximumPoolSize(12);
        config.setConnectionTimeout(5_000);
        return new HikariDataSource(config);
    }
}
""",
    ),
    tpl(
        "src/main/java/com/{corp}/{svc}/SlackNotifier.java",
        "java",
        """
package com.{{corp}}.{{svc}};

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

public final class SlackNotifier {
    private static final String TOKEN = "{{slack_token}}";
    private final HttpClient client = HttpClient.newHttpClient();

    public int post(String channel, String text) throws Exception {
        String json = "{\\"channel\\":\\"" + channel + "\\",\\"text\\":\\"" + text + "\\"}";
        HttpRequest req = HttpRequest.newBuilder(URI.create("https://slack.com/api/chat.postMessage"))
            .header("Authorization", "Bearer " + TOKEN)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build();
        return client.send(req, HttpResponse.BodyHandlers.ofString()).statusCode();
    }
}
""",
    ),
    tpl("deploy/keys/{svc}_deploy.pem", "pem", "{{pem}}\n"),
]
