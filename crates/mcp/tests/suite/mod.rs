mod config;
mod http;
mod prompt_section;
mod stdio;
