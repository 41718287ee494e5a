mod config;
mod stdio;
