# Sponsorbot's image. compose.yaml builds it (docker compose build); alone:
#   docker build -t sponsorbot . && docker run --rm -p 127.0.0.1:8080:8080 sponsorbot
#
# Two stages: the first builds Sponsorbot's wheel and installs it, with its dependencies, into
# a virtual environment; the second copies only that environment onto a clean slim Python, so
# no source tree, build tool or pip cache ships. Nothing secret is built in: every setting
# comes from the environment when the container runs (.env through compose.yaml).
#
# With no SPONSORBOT_DATABASE_URL the product starts its embedded PostgreSQL in the data
# directory (a volume on /var/lib/sponsorbot); compose.yaml points it at its db service.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
RUN python -m venv /opt/sponsorbot/venv
# The dependencies first, from pyproject.toml alone: a placeholder package (version 0, an
# empty readme) is installed with them and removed again. Every release changes the version
# and most change the README, so a layer that copied them would download every dependency
# again on each update; this one is rebuilt only when pyproject.toml changes.
COPY pyproject.toml ./
RUN mkdir -p src/sponsorbot \
    && printf '__version__ = "0"\n' >src/sponsorbot/__init__.py \
    && touch README.md \
    && /opt/sponsorbot/venv/bin/pip install . \
    && /opt/sponsorbot/venv/bin/pip uninstall --yes sponsorbot \
    && rm -rf src README.md
COPY README.md ./
COPY src ./src
RUN /opt/sponsorbot/venv/bin/pip wheel --no-deps --wheel-dir /dist . \
    && /opt/sponsorbot/venv/bin/pip install --no-deps --force-reinstall /dist/sponsorbot-*.whl

FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/opt/sponsorbot/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    SPONSORBOT_HOST=0.0.0.0 \
    SPONSORBOT_PORT=8080 \
    SPONSORBOT_DATA_DIR=/var/lib/sponsorbot
# A fixed uid (10001) so that install.sh can give the backups directory on the host to it.
RUN groupadd --system --gid 10001 sponsorbot \
    && useradd --system --uid 10001 --gid sponsorbot --home-dir /var/lib/sponsorbot \
        --no-create-home --shell /usr/sbin/nologin sponsorbot \
    && install -d -m 0700 -o sponsorbot -g sponsorbot /var/lib/sponsorbot /var/lib/sponsorbot/backups
COPY --from=build /opt/sponsorbot/venv /opt/sponsorbot/venv
USER 10001:10001
WORKDIR /var/lib/sponsorbot
EXPOSE 8080
# slim has no curl: Python's urllib asks /healthz (200 once the database answers and the
# migrations are current). Only the api role serves HTTP; compose.yaml turns this off for
# the workers.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('SPONSORBOT_PORT', '8080') + '/healthz', timeout=4)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["sponsorbot"]
CMD ["run", "--role", "api"]
