# Shell helpers shared by scripts/test.sh and the bench scripts; source it
# from the repository root (`. scripts/lib.sh`).

# Prints a loopback TCP port nothing listens on right now (the OS's pick for
# port 0, released at once), for a server that takes its port as an option.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
