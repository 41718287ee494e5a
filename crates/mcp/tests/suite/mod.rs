mod config;
mod http;
mod log;
mod oauth;
mod prompt_section;
mod resources;
mod stdio;
