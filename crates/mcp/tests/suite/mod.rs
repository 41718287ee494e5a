mod config;
mod prompt_section;
mod stdio;
