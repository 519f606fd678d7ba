"""The Nsight Systems SQLite export source (and its reports, read through `nsys export`)."""
