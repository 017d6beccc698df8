#!/usr/bin/python3
"""Runs a program with at most N file descriptors open, as `ulimit -n N` would, but first closes
every descriptor beyond standard input, output and error, so that what the program can open does
not depend on what the test runner happened to pass on.

    open_files_limit.py N PROGRAM [ARG...]
"""
import os
import resource
import sys

limit = int(sys.argv[1])
os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
os.execv(sys.argv[2], sys.argv[2:])
