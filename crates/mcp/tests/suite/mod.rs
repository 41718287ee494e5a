mod config;
mod http;
mod log;
mod prompt_section;
mod stdio;
