"""The PyTorch profiler (Kineto) Chrome-trace JSON source."""
